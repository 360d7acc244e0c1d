// Package dbtest gives tests a real Postgres, isolated per test.
//
// It promises:
//
//   - URL resolves the server to use from TEST_DATABASE_URL, then
//     DATABASE_URL, then a server on 127.0.0.1:5432. When none is available
//     the test fails (it never skips): a suite that silently skips its
//     database tests looks green while testing nothing. Run
//     scripts/ensure-postgres to get a working URL on any machine.
//   - Pool, Schema and Tx release everything they create when the test ends,
//     even when it fails, so tests can run in parallel against one server
//     without seeing each other's data.
//   - Schema gives each caller a freshly created schema and a pool whose
//     connections resolve unqualified names in it; code under test needs no
//     knowledge of the isolation.
//   - Tx gives a transaction that is always rolled back, for tests that only
//     need to see their own writes.
//   - StartCluster gives a test a server of its own, made from the installed
//     server binaries, to crash, stop and start without disturbing the
//     others.
package dbtest
