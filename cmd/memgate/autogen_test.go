package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestAutoGen runs memgate's AutoGen package (python/memgate-autogen) against a running
// memgate: mypy --strict on the package and its test, then
// python/memgate-autogen/tests/test_autogen.py, whose AssistantAgent with a
// MemgateMemory must get the owner's fact in its prompt, while another requester's
// memory for the same agent sees nothing, and whose clear deletes only what it wrote.
// AutoGen comes from PyPI into a venv of the machine's (scripts/autogen-venv) on the
// first run, about 40 s; later runs, from any checkout, reuse it.
func TestAutoGen(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(root, "scripts", "autogen-venv")
	pkg := filepath.Join(root, "python", "memgate-autogen")
	python := func(limit time.Duration, env []string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		cmd := exec.CommandContext(ctx, venv, args...)
		cmd.Dir = pkg
		cmd.Env = append(os.Environ(), env...)
		cmd.WaitDelay = 5 * time.Second
		started := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/autogen-venv %s: %v after %v\n%s", strings.Join(args, " "), err, time.Since(started).Round(time.Millisecond), out)
		}
		t.Logf("scripts/autogen-venv %s: %v", strings.Join(args, " "), time.Since(started).Round(time.Millisecond))
		return string(out)
	}
	// Installs on the first run (a failed install fails the test), then type-checks.
	python(5*time.Minute, nil, "-m", "mypy", "--strict", "src/memgate_autogen", "tests/test_autogen.py")

	mark := suffix()
	agent, owner, other := "autogen-"+mark, "alice-"+mark, "bob-"+mark
	neo4jtest.Forget(t, mark)
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	key := hex.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(key))
	config := filepath.Join(t.TempDir(), "memgate.yaml")
	file := "auth:\n  keys:\n    - name: autogen-" + mark + "\n      sha256: \"" + hex.EncodeToString(sum[:]) +
		"\"\n      trusted: true\n      requesters: [" + owner + ", " + other + "]\n"
	if err := os.WriteFile(config, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	_, base := startBinary(t, map[string]string{"MEMGATE_INGEST_SCOPE": "agent-" + agent}, "--config", config)

	req, _ := http.NewRequest("POST", base+"/v1/agents", strings.NewReader(`{"id":"`+agent+`"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Requester-Id", owner)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/agents: %d, want 201", resp.StatusCode)
	}

	out := python(3*time.Minute, []string{"MG_AUTOGEN_URL=" + base, "MG_AUTOGEN_KEY=" + key,
		"MG_AUTOGEN_OWNER=" + owner, "MG_AUTOGEN_OTHER=" + other, "MG_AUTOGEN_AGENT=" + agent},
		"tests/test_autogen.py")
	t.Log(out)
}
