package dbtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Cluster is a Postgres server of one test's own, made with initdb from the
// installed server binaries: a test that crashes or restarts Postgres must
// not do it to the server every other test shares.
type Cluster struct {
	tb    testing.TB
	ctl   string   // pg_ctl
	owner []string // the command prefix that runs as the cluster's owner
	dir   string   // holds data/ and server.log
	port  int
}

// clusterConf is what a test cluster runs with. Like the private cluster of
// scripts/ensure-postgres it does not flush: a crash of Postgres (not of the
// machine) loses nothing written to the kernel. synchronous_commit is off as
// on many a tuned server: what needs its commits durable must ask for it.
const clusterConf = `
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
fsync = off
full_page_writes = off
synchronous_commit = off
max_connections = 50
`

// StartCluster creates and starts a cluster in a temporary directory, on a
// free port, and removes it when the test ends. It fails the test when the
// server binaries are not installed (scripts/ensure-postgres installs them).
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	initdb, ctl, err := serverBinaries()
	if err != nil {
		tb.Fatalf("dbtest: %v; install the PostgreSQL server package (scripts/ensure-postgres does when it needs one)", err)
	}
	c := &Cluster{tb: tb, ctl: ctl}
	// Owned by the postgres user when we are root (initdb refuses root),
	// in a directory that user can reach: not t.TempDir, which is private.
	dir, err := os.MkdirTemp(reachableTemp(), "agentwire-dbtest-") //nolint:usetesting // t.TempDir is private to us
	if err != nil {
		tb.Fatal(err)
	}
	c.dir = dir
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		if err := c.ownedByPostgres(); err != nil {
			tb.Fatalf("dbtest: running as root, the cluster must belong to the postgres user: %v", err)
		}
	}
	c.run("initdb", initdb, "-D", c.data(), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	port, err := freePort(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	c.port = port
	conf, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = fmt.Fprintf(conf, clusterConf, port)
	if cerr := conf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.stop("immediate") }) // a test that failed may have left it down
	c.Start()
	return c
}

// URL is the cluster's connection URL.
func (c *Cluster) URL() string {
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(c.port) + "/postgres?sslmode=disable"
}

// Crash stops the server the way a crash does (no shutdown checkpoint; the
// next start replays the WAL) and leaves it down.
func (c *Cluster) Crash() { c.tb.Helper(); c.mustStop("immediate") }

// Stop shuts the server down cleanly and leaves it down.
func (c *Cluster) Stop() { c.tb.Helper(); c.mustStop("fast") }

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.tb.Helper()
	c.run("pg_ctl start", c.ctl, "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "-s", "start")
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) mustStop(mode string) {
	c.tb.Helper()
	if err := c.stop(mode); err != nil {
		c.tb.Fatal(err)
	}
}

func (c *Cluster) stop(mode string) error {
	out, err := c.command(c.ctl, "-D", c.data(), "-m", mode, "-w", "-s", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("dbtest: pg_ctl stop -m %s: %w: %s", mode, err, bytes.TrimSpace(out))
	}
	return nil
}

func (c *Cluster) run(what, name string, args ...string) {
	c.tb.Helper()
	if out, err := c.command(name, args...).CombinedOutput(); err != nil {
		logTail, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		c.tb.Fatalf("dbtest: %s: %v: %s\n%s", what, err, bytes.TrimSpace(out), logTail)
	}
}

// command runs as the cluster's owner, from a directory it can enter. It
// is not tied to the test's context: a server started by pg_ctl outlives
// the command, and the cleanup stops it.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	argv := slices.Concat(c.owner, []string{name}, args)
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...) //nolint:gosec // the installed server binaries
	cmd.Dir = "/"
	cmd.WaitDelay = time.Minute
	return cmd
}

func (c *Cluster) ownedByPostgres() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return err
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(c.dir, uid, gid); err != nil {
		return err
	}
	c.owner = []string{runuser, "-u", "postgres", "--"}
	return nil
}

// reachableTemp is the temporary directory to make the cluster in: the
// system's ($TMPDIR), unless another user could not reach it (a private
// TMPDIR of root's), then /tmp.
func reachableTemp() string {
	dir := os.TempDir()
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// serverBinaries finds initdb and pg_ctl where Debian installs them (the
// newest major version), else on PATH.
func serverBinaries() (initdb, ctl string, err error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, d := range dirs {
		i, c := filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl")
		if isFile(i) && isFile(c) {
			return i, c, nil
		}
	}
	if initdb, err = exec.LookPath("initdb"); err != nil {
		return "", "", fmt.Errorf("no initdb under /usr/lib/postgresql/*/bin or on PATH")
	}
	if ctl, err = exec.LookPath("pg_ctl"); err != nil {
		return "", "", fmt.Errorf("no pg_ctl beside initdb")
	}
	return initdb, ctl, nil
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func freePort(ctx context.Context) (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil //nolint:forcetypeassert // a TCP listener's address
}
