// Package redistest gives tests a real Redis server: one named by
// REDIS_URL or CTXFIT_TEST_REDIS_URL, or a redis-server it starts on a free
// port of 127.0.0.1 and stops by its PID.
//
// A package shares one server through [Main] and [URL]:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
//
//	func TestX(t *testing.T) { url := redistest.URL(t) ... }
//
// A test that stops and restarts its server (to see Redis go down), or
// pauses and resumes it (to see Redis stall), starts a private one with
// [Start].
//
// When redis-server can neither be found nor started, tests skip, unless the
// CI variable is set (to anything but "", "0" or "false"): then they fail.
package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Variables naming an existing server, checked in this order.
var urlVars = []string{"CTXFIT_TEST_REDIS_URL", "REDIS_URL"}

// Server is a redis-server this package started, daemonized, on 127.0.0.1.
// Its methods are safe for concurrent use.
type Server struct {
	// Addr is "127.0.0.1:PORT".
	Addr string
	dir  string
	args []string

	mu  sync.Mutex
	pid int // 0 while stopped
}

// URL returns "redis://127.0.0.1:PORT/0".
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// StartServer starts redis-server on a free port with no persistence. Extra
// arguments are passed on (e.g. "--cluster-enabled", "yes"). Call Stop to
// end it.
func StartServer(extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redistest: redis-server not found: %w", err)
	}
	var lastErr error
	for range 3 { // a free port may be taken between choosing and binding it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "redistest-")
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
		s.args = append([]string{
			"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--save", "", "--appendonly", "no",
			"--daemonize", "yes", "--pidfile", filepath.Join(dir, "redis.pid"),
			"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"),
		}, extra...)
		s.args = append([]string{bin}, s.args...)
		if lastErr = s.Restart(); lastErr == nil {
			return s, nil
		}
		_ = os.RemoveAll(dir)
	}
	return nil, lastErr
}

// Restart starts the server again on the same port, with the same
// arguments; it does nothing if the server runs.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid != 0 {
		return nil
	}
	pidfile := filepath.Join(s.dir, "redis.pid")
	_ = os.Remove(pidfile)
	cmd := exec.Command(s.args[0], s.args[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("redistest: %s: %w: %s", s.args[0], err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pid, perr := readPID(pidfile)
		if perr == nil && ping(s.Addr) == nil {
			s.pid = pid
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			if perr == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return fmt.Errorf("redistest: redis-server on %s did not come up: %s", s.Addr, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// PID returns the server's process ID, 0 while it is stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// Pause stops the server's process with SIGSTOP: it keeps its port, and the
// kernel still accepts connections, but it answers nothing until [Server.Resume]
// (a stalled Redis). Pausing a stopped server is an error.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT; resuming a running one
// does nothing.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 {
		return fmt.Errorf("redistest: redis-server on %s is stopped", s.Addr)
	}
	if err := syscall.Kill(s.pid, sig); err != nil {
		return fmt.Errorf("redistest: %v to pid %d: %w", sig, s.pid, err)
	}
	return nil
}

// Stop ends the server by its PID (SIGCONT in case it is paused, SIGTERM,
// then SIGKILL after 5 s) and returns once the port refuses connections.
// Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 {
		return nil
	}
	pid := s.pid
	s.pid = 0
	_ = syscall.Kill(pid, syscall.SIGCONT) // a paused server handles SIGTERM only once continued
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("redistest: stop pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ping(s.Addr) == nil || syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(5 * time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.Stop()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Start starts a private server for t and stops it when t ends. It skips
// t (fails it under CI) when redis-server cannot be started.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	s, err := StartServer(extra...)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("redistest: %v", err)
		}
	})
	return s
}

var shared struct {
	sync.Mutex
	srv *Server
	url string
	err error
}

// URL returns the address of the package's shared server: the value of
// CTXFIT_TEST_REDIS_URL or REDIS_URL, or else a redis-server started on
// first use and stopped by [Main]. It skips t (fails it under CI) when
// there is none. Tests sharing it must use keys of their own.
func URL(t testing.TB) string {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.url == "" && shared.err == nil {
		for _, v := range urlVars {
			if u := os.Getenv(v); u != "" {
				shared.url = u
				return u
			}
		}
		shared.srv, shared.err = StartServer()
		if shared.err == nil {
			shared.url = shared.srv.URL()
		}
	}
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	return shared.url
}

// Main runs the tests and then stops the shared server, if [URL] started
// one; it returns m.Run's exit code. Call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		shared.srv = nil
	}
	return code
}

// unavailable skips t, or fails it when CI is set.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if ci := strings.ToLower(os.Getenv("CI")); ci != "" && ci != "0" && ci != "false" {
		t.Fatalf("%v (CI is set, so Redis tests must run: install redis-server or set CTXFIT_TEST_REDIS_URL)", err)
	}
	t.Skipf("%v; install redis-server or set CTXFIT_TEST_REDIS_URL to run the Redis tests", err)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func readPID(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// ping sends an inline PING and waits for +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 7)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf[:n]), "+PONG") {
		return fmt.Errorf("redistest: PING answered %q", buf[:n])
	}
	return nil
}

// isZombie reports whether pid has exited but not been reaped (a daemon
// whose parent does not reap it); it counts as stopped.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}
