// Package natstest runs real, embedded NATS servers with JetStream for
// tests, one per caller, so tests can run in parallel without sharing
// subjects or streams and without depending on a server on the machine.
//
// It promises:
//
//   - Server listens on 127.0.0.1 on a random free port, keeps JetStream
//     state in a directory private to the test, logs nothing, and is ready
//     for connections when it returns.
//   - Everything it creates — servers, connections, store directories — is
//     shut down or removed when the test ends, even when it fails.
//   - Restart replaces a server with a new one on the same port and the same
//     store directory, so tests can exercise client reconnects and
//     JetStream recovery the way a production restart would.
package natstest
