package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memgate/memgate/config"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds memgate once for the tests that run it as a process.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "memgate-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "memgate")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race") // the process under test is checked for data races too
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// command runs the binary in an empty folder with only the given MEMGATE_* variables.
func command(t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if raceEnabled {
		cmd.Env = append(cmd.Env, "GORACE=halt_on_error=1") // a data race in memgate stops it, and the test fails
	}
	return cmd
}

func TestCommand_ErrBadConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"UnknownLogLevel", map[string]string{"MEMGATE_LOG_LEVEL": "loud"}, "log.level"},
		{"MalformedURI", map[string]string{"MEMGATE_NEO4J_URI": "bolt//nohost"}, "neo4j.uri"},
		{"NonLoopbackWithoutKeys", map[string]string{"MEMGATE_SERVER_ADDR": "0.0.0.0:8080"}, "server.addr"},
	}
	for _, tc := range cases {
		for _, sub := range []string{"serve", "migrate", "config"} {
			t.Run(tc.name+"/"+sub, func(t *testing.T) {
				var stderr bytes.Buffer
				cmd := command(t, tc.env, sub)
				cmd.Stderr = &stderr
				err := cmd.Run()
				exit, ok := err.(*exec.ExitError)
				if !ok || exit.ExitCode() != 2 {
					t.Fatalf("memgate %s exited with %v, want exit code 2; stderr:\n%s", sub, err, stderr.String())
				}
				if !strings.Contains(stderr.String(), tc.want) {
					t.Fatalf("stderr does not name %s:\n%s", tc.want, stderr.String())
				}
			})
		}
	}
}

func TestCommand_ErrUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"frobnicate"}, {"serve", "--no-such-flag"}, {"serve", "extra"}} {
		err := command(t, nil, args...).Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
			t.Errorf("memgate %v exited with %v, want exit code 2", args, err)
		}
	}
}

func TestCommand_ConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "custom.yaml")
	if err := os.WriteFile(path, []byte("neo4j:\n  password: hunter2\n  database: mem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := command(t, nil, "config", "--config", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "database: mem") || strings.Contains(string(out), "hunter2") {
		t.Fatalf("memgate config printed:\n%s\nwant the file's database and a masked password", out)
	}
}

// TestServe_SIGTERM runs the binary against the test database, checks it serves, and
// that SIGTERM shuts it down cleanly with exit code 0.
func TestServe_SIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	cmd, _ := startBinary(t, map[string]string{"MEMGATE_INGEST_WORKERS": "0"}) // leave other tests' episodes alone

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("memgate exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("memgate did not exit within 30 s of SIGTERM")
	}
}

// TestServe_ReadyzFollowsNeo4j starts a Neo4j of its own with scripts/neo4j-local,
// stops it under a running memgate and starts it again: /readyz goes 200, 503 with a
// reason, 200, without restarting memgate.
func TestServe_ReadyzFollowsNeo4j(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	uri, neo4jLocal := privateNeo4j(t)

	t.Setenv("MEMGATE_SERVER_ADDR", "127.0.0.1:0")
	t.Setenv("MEMGATE_NEO4J_URI", uri)
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMain(cfg, neo4jtest.Logger(t))
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	readyz := "http://" + m.Addr() + "/readyz"

	waitStatus(t, readyz, http.StatusOK, 60*time.Second)
	neo4jLocal("stop")
	body := waitStatus(t, readyz, http.StatusServiceUnavailable, 30*time.Second)
	if !strings.Contains(body, `"code":"unavailable"`) || !strings.Contains(body, "neo4j") {
		t.Fatalf("readyz body %s does not give the reason", body)
	}
	neo4jLocal("start")
	waitStatus(t, readyz, http.StatusOK, 60*time.Second)
}

// privateNeo4j starts a Neo4j of the test's own with the local launcher (a test that
// stops and starts Neo4j must not take the shared one away from the others), and
// returns its URI and a function that runs scripts/neo4j-local start or stop on it.
func privateNeo4j(t *testing.T) (string, func(action string)) {
	t.Helper()
	script, err := filepath.Abs("../../scripts/neo4j-local")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	env := append(os.Environ(),
		fmt.Sprintf("NEO4J_LOCAL_BOLT_PORT=%d", port), "NEO4J_LOCAL_HTTP_PORT=0",
		"NEO4J_LOCAL_DATA="+filepath.Join(t.TempDir(), "neo4j"), "NEO4J_LOCAL_HEAP=512m",
		"NEO4J_LOCAL_PAGECACHE_MB=64")
	neo4jLocal := func(action string) {
		t.Helper()
		cmd := exec.Command(script, action)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scripts/neo4j-local %s: %v\n%s", action, err, out)
		}
	}
	neo4jLocal("start")
	t.Cleanup(func() { neo4jLocal("stop") })
	return fmt.Sprintf("bolt://127.0.0.1:%d", port), neo4jLocal
}

// waitStatus polls url until it answers status, and returns the body.
func waitStatus(t *testing.T, url string, status int, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, b.String())
			if resp.StatusCode == status {
				return b.String()
			}
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %d within %v; last: %s", url, status, limit, last)
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
