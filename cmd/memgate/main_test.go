package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds memgate once for the tests that run it as a process.
func binary(t testing.TB) string {
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
func command(t testing.TB, env map[string]string, args ...string) *exec.Cmd {
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
		{"MisspeltVariable", map[string]string{"MEMGATE_LLM_MODLE": "x"},
			"MEMGATE_LLM_MODLE names no setting (did you mean MEMGATE_LLM_MODEL?)"},
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

// A host key with a field memgate does not know (allowed_requesters for requesters:
// the key would be trusted to name anyone) stops serve, naming the key and the field.
func TestCommand_ErrUnknownKeyField(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.yaml")
	file := "auth:\n  keys:\n    - name: k\n      sha256: \"" + strings.Repeat("ab", 32) + "\"\n      trusted: true\n      allowed_requesters: [app1-*]\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := command(t, nil, "serve", "--config", path)
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
		t.Fatalf("memgate serve exited with %v, want exit code 2; stderr:\n%s", err, stderr.String())
	}
	if want := `auth.keys[0]: unknown field "allowed_requesters"`; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr does not say %s:\n%s", want, stderr.String())
	}
}

// A tokenizer memgate does not have stops serve, naming the key, before it listens.
func TestCommand_ErrContextTokenizer(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	cmd := command(t, map[string]string{"MEMGATE_MEMORY_CONTEXT_TOKENIZER": "p50k_base"}, "serve")
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("memgate serve exited with %v, want exit code 1; stderr:\n%s", err, stderr.String())
	}
	if want := `memory.context_tokenizer: unknown tokenizer \"p50k_base\"`; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr does not say %s:\n%s", want, stderr.String())
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
	for key, want := range map[string]string{"neo4j.database": "mem\n", "neo4j.password": "********\n", "neo4j.uri": "bolt://127.0.0.1:7687\n"} {
		out, err := command(t, nil, "config", "--config", path, "--get", key).Output()
		if err != nil || string(out) != want {
			t.Errorf("memgate config --get %s: %q, %v; want %q", key, out, err, want)
		}
	}
	for _, key := range []string{"neo4j", "neo4j.nope", "nope"} {
		err := command(t, nil, "config", "--config", path, "--get", key).Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
			t.Errorf("memgate config --get %s exited with %v, want 2: not one setting", key, err)
		}
	}
}

// TestServe_SIGTERM runs the binary against the test database, checks it serves, and
// that SIGTERM shuts it down cleanly with exit code 0.
func TestServe_SIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	p, _ := startBinary(t, map[string]string{"MEMGATE_INGEST_WORKERS": "0"}) // leave other tests' episodes alone
	p.stop(t)                                                                // exit 0 within a minute, or the test fails
	if p.err != nil {
		t.Fatalf("memgate exited with %v after SIGTERM, want 0", p.err)
	}
}

// waitStatus polls url until it answers status, and returns the body.
func waitStatus(t testing.TB, url string, status int, limit time.Duration) string {
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
