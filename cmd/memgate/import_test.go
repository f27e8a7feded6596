package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestImport_Resumes imports a file of 1,000 lines (make reliability: 10,000) through the CLI against a running
// memgate, kills the import halfway, and runs it again: every line lands exactly once,
// and the lines that cannot be read are reported, not sent.
func TestImport_Resumes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	env := map[string]string{"MEMGATE_INGEST_WORKERS": "0"}
	if !reliability {
		// The import prints its progress every two seconds, and the test kills it
		// halfway on one of those lines; 1,000 lines in batches of ten went in less than
		// that once writes were committed together. Ten batches a second make the first
		// run last about ten seconds. (make reliability's 10,000 lines need no limit, and
		// it reports how fast the rerun goes.)
		env["MEMGATE_SERVER_RATE_LIMIT"], env["MEMGATE_SERVER_RATE_BURST"] = "10", "10"
	}
	srv, base := startBinary(t, env)
	defer srv.stop(t)
	mark := suffix()
	neo4jtest.Forget(t, mark)
	requester, agent := "importer-"+mark, "imported-"+mark
	c := client.New(base, "", requester)
	req, _ := http.NewRequest("POST", base+"/v1/agents", strings.NewReader(`{"id":"`+agent+`"}`))
	req.Header.Set("X-Requester-Id", requester)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("creating the agent: %v", err)
	}
	resp.Body.Close() // an unread, unclosed body keeps its connection busy for good (goleak found it)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating the agent: %s", resp.Status)
	}

	lines, bad := 1_000, 432 // bad: the line after which two unreadable lines come
	if reliability {
		lines, bad = 10_000, 4321
	}
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < lines; i++ {
		b, _ := json.Marshal(map[string]any{"agent_id": agent, "content": fmt.Sprintf("Imported memory number %d.", i),
			"metadata": map[string]any{"line": i}})
		fmt.Fprintf(f, "%s\n", b)
		if i == bad {
			fmt.Fprintln(f, `{"agent_id": "`+agent+`", "contents": "a typo in a field name"}`)
			fmt.Fprintln(f, `{"agent_id": "`+agent+`"}`)
		}
	}
	f.Close()
	args := []string{"import", "--url", base, "--requester", requester, "--batch", "10", "--workers", "4", "--retry", "2m", path}

	// The first run is killed once half the file is in.
	first := command(t, nil, args...)
	stderr, _ := first.StderrPipe()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var said strings.Builder // what the import printed, for a failure
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		var done, total int
		if n, _ := fmt.Sscanf(sc.Text(), "imported %d of %d", &done, &total); n == 2 && done >= lines/2 {
			break
		}
	}
	_ = first.Process.Kill()
	_ = first.Wait()
	landed := count(t, c, agent)
	if landed < lines/4 || landed >= lines {
		t.Fatalf("after the kill %d memories landed; the test wants the import cut halfway. The import said:\n%s", landed, said.String())
	}

	start := time.Now()
	out, err := command(t, nil, args...).Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		var stderr []byte
		if ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the rerun: %v, want exit code 3 (done, two lines rejected): %s\n%s", err, out, stderr)
	}
	t.Logf("rerun in %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(out)))
	var sum struct{ lines, accepted, duplicates, rejected int }
	if _, err := fmt.Sscanf(string(out), "lines %d, accepted %d, duplicates %d, rejected %d",
		&sum.lines, &sum.accepted, &sum.duplicates, &sum.rejected); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	// Requests in flight when the first run was killed may still commit after landed
	// was counted (their retry is then a duplicate): accepted is at most what had not
	// landed, and every line lands exactly once (below).
	if sum.lines != lines+2 || sum.rejected != 2 || sum.accepted+sum.duplicates != lines || sum.accepted > lines-landed {
		t.Errorf("summary %+v; %d had landed before the rerun", sum, landed)
	}
	rejects, _ := os.ReadFile(path + ".rejects.jsonl")
	if n := strings.Count(string(rejects), "\n"); n != 2 || !strings.Contains(string(rejects), fmt.Sprintf(`"line":%d`, bad+2)) {
		t.Errorf("rejects file:\n%s", rejects)
	}

	// Every line exactly once.
	seen := map[string]int{}
	exported := filepath.Join(t.TempDir(), "export.jsonl")
	if out, err := command(t, nil, "export", "--url", base, "--requester", requester, "--agent", agent, "--out", exported).CombinedOutput(); err != nil {
		t.Fatalf("export: %v: %s", err, out)
	}
	data, _ := os.ReadFile(exported)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m struct{ Memory client.Stored }
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m.Memory.ID == "" {
			continue // a {"fact": ...} line: the agent's view holds the global space, whose facts other tests write
		}
		seen[m.Memory.Content]++
	}
	for i := 0; i < lines; i++ {
		if n := seen[fmt.Sprintf("Imported memory number %d.", i)]; n != 1 {
			t.Fatalf("line %d landed %d times", i, n)
		}
	}
	if len(seen) != lines {
		for i := 0; i < lines; i++ {
			delete(seen, fmt.Sprintf("Imported memory number %d.", i))
		}
		t.Errorf("%d distinct memories, want %d; the export also held %v", len(seen)+lines, lines, seen)
	}
}

// count counts an agent's memories through the API.
func count(t *testing.T, c *client.Client, agent string) int {
	n, cursor := 0, ""
	for {
		page, err := c.List(context.Background(), agent, "", cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Items)
		if cursor = page.NextCursor; !page.HasMore {
			return n
		}
	}
}

// TestImport_Rejects runs imports whose every line is refused before anything is
// sent (no memgate needed): the rejects file appears only when there is a reject,
// is never written through a symlink, and replaces an earlier run's; a line over
// client.MaxLine is one rejected line, not the end of the run; a run with rejects
// exits 3.
func TestImport_Rejects(t *testing.T) {
	t.Parallel()
	importFile := func(t *testing.T, path string) (int, string) {
		t.Helper()
		var stdout, stderr strings.Builder
		cmd := command(t, nil, "import", "--url", "http://127.0.0.1:1", "--requester", "r", path)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String() + stderr.String()
	}
	bad := func(t *testing.T) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "bad.jsonl")
		long := `{"agent_id": "a", "content": "` + strings.Repeat("x", client.MaxLine) + `"}`
		if err := os.WriteFile(path, []byte("{\"agent_id\": \"a\"}\n"+long+"\nnot json\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	t.Run("NoInputNoRejectsFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing.jsonl")
		if code, out := importFile(t, path); code != 1 || strings.Contains(out, "run it again") {
			t.Errorf("exit %d, want 1 without advice to run it again: %s", code, out)
		}
		if _, err := os.Lstat(path + ".rejects.jsonl"); !os.IsNotExist(err) {
			t.Errorf("a rejects file beside an input that does not exist: %v", err)
		}
	})
	t.Run("EveryLineRejected", func(t *testing.T) {
		path := bad(t)
		if err := os.WriteFile(path+".rejects.jsonl", []byte("an earlier run's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := importFile(t, path)
		if code != 3 || !strings.Contains(out, "lines 3, accepted 0, duplicates 0, rejected 3") {
			t.Fatalf("exit %d, want 3 with three lines rejected: %s", code, out)
		}
		rejects, _ := os.ReadFile(path + ".rejects.jsonl")
		for _, want := range []string{`"line":1`, `"line":2`, `"line":3`, "over the"} {
			if !strings.Contains(string(rejects), want) {
				t.Errorf("rejects file lacks %s:\n%.500s", want, rejects)
			}
		}
		if strings.Count(string(rejects), "\n") != 3 {
			t.Errorf("rejects file has not exactly this run's three lines:\n%.500s", rejects)
		}
	})
	t.Run("NeverThroughSymlink", func(t *testing.T) {
		path := bad(t)
		target := filepath.Join(t.TempDir(), "precious")
		if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path+".rejects.jsonl"); err != nil {
			t.Fatal(err)
		}
		if code, out := importFile(t, path); code != 1 || !strings.Contains(out, "not a regular file") {
			t.Errorf("exit %d, want 1 naming the symlink: %s", code, out)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
			t.Errorf("the symlink's target was written: %q", b)
		}
	})
}

// TestImport_RidesOutRestart starts an import while its memgate is down and brings
// memgate back on the same address: the import sends the refused batches again (with
// their keys) and every line lands once, exit 0.
func TestImport_RidesOutRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	mark := suffix()
	neo4jtest.Forget(t, mark)
	requester, agent := "importer-"+mark, "imported-"+mark
	env := map[string]string{"MEMGATE_INGEST_WORKERS": "0", "MEMGATE_SERVER_ADDR": restartableAddr(t)}
	srv, base := startBinary(t, env)
	c := apiClient{t: t, base: base, requester: requester}
	if status := c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil); status != http.StatusCreated {
		t.Fatalf("creating the agent: %d", status)
	}
	const lines = 50
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	var file strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&file, `{"agent_id": %q, "content": "Memory %d of a restart."}`+"\n", agent, i)
	}
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.stop(t)

	var stdout, stderr strings.Builder
	imp := command(t, nil, "import", "--url", base, "--requester", requester, "--batch", "10", "--retry", "1m", path)
	imp.Stdout = &stdout
	pipe, err := imp.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	// memgate comes back only once the import has met a refused batch (its stderr
	// says so), however slowly a loaded machine starts the import.
	refused, read := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		seen := false
		for lines := bufio.NewScanner(pipe); lines.Scan(); {
			stderr.WriteString(lines.Text() + "\n")
			if !seen && strings.Contains(lines.Text(), "sending the batch again") {
				seen = true
				close(refused)
			}
		}
	}()
	select {
	case <-refused:
	case <-read:
		t.Fatalf("the import ended without meeting a refused batch:\n%s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("the import met no refused batch in a minute")
	}
	// Back on the same address, as a restarted service is.
	startBinary(t, env)
	<-read
	if err := imp.Wait(); err != nil {
		t.Fatalf("import: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("lines %d, accepted %d, duplicates 0, rejected 0", lines, lines)) {
		t.Errorf("summary: %s", stdout.String())
	}
	if n := count(t, client.New(base, "", requester), agent); n != lines {
		t.Errorf("%d memories stored, want %d: each once", n, lines)
	}
}

// TestImport_WaitsForExtraction: memgate import --wait waits until the memories it
// stored are extracted, then prints what extracting them cost: with the scripted LLM
// reporting fixed usage, one chat call of known tokens a memory, and the embedding
// calls, inputs, tokens and seconds the memories themselves show (read back with
// export, which carries each memory's cost).
func TestImport_WaitsForExtraction(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	llm := llmtest.New()
	defer llm.Close()
	const prompt, completion, perInput = 500, 30, 2
	llm.ReportUsage(prompt, completion, perInput)
	mark := suffix()
	neo4jtest.Forget(t, mark)
	requester, agent := "importer-"+mark, "imported-"+mark
	srv, base := startBinary(t, map[string]string{
		"MEMGATE_LLM_BASE_URL": llm.BaseURL(), "MEMGATE_LLM_API_KEY": "test", "MEMGATE_LLM_MAX_RETRIES": "0",
		"MEMGATE_INGEST_POLL": "20ms", "MEMGATE_INGEST_SCOPE": "agent-" + agent,
	})
	defer srv.stop(t)
	c := apiClient{t: t, base: base, requester: requester}
	if status := c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil); status != http.StatusCreated {
		t.Fatalf("creating the agent: %d", status)
	}
	const lines = 6
	var file strings.Builder
	for i := 0; i < lines; i++ {
		b, _ := json.Marshal(map[string]any{"agent_id": agent, "content": llm.Knows(fmt.Sprintf("Ward%d", i), fmt.Sprintf("Yates%d", i))})
		fmt.Fprintf(&file, "%s\n", b)
	}
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := command(t, nil, "import", "--url", base, "--requester", requester, "--wait", "1m", path).Output()
	if err != nil {
		t.Fatalf("import: %v: %s", err, out)
	}
	said := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(said) != 2 {
		t.Fatalf("import said %q, want the summary and the extraction's totals", out)
	}
	var x client.Extraction
	var seconds float64
	if _, err := fmt.Sscanf(said[1], "extraction of %d memories: done %d, failed %d, pending %d, gone %d; "+
		"chat calls %d, prompt tokens %d, completion tokens %d, embedding calls %d, embedding inputs %d, embedding tokens %d, %f s",
		&x.Memories, &x.Done, &x.Failed, &x.Pending, &x.Gone, &x.Cost.ChatCalls, &x.Cost.PromptTokens, &x.Cost.CompletionTokens,
		&x.Cost.EmbeddingCalls, &x.Cost.EmbeddingInputs, &x.Cost.EmbeddingTokens, &seconds); err != nil {
		t.Fatalf("the totals %q: %v", said[1], err)
	}
	// What the memories show, summed.
	var exported strings.Builder
	if _, _, err := client.Export(context.Background(), client.New(base, "", requester), agent, &exported); err != nil {
		t.Fatal(err)
	}
	var shown client.Cost
	for _, l := range strings.Split(strings.TrimSpace(exported.String()), "\n") {
		var m struct{ Memory *client.Stored }
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m.Memory != nil {
			shown = shown.Add(m.Memory.Cost)
		}
	}
	want := client.Extraction{Memories: lines, Done: lines, Cost: shown}
	want.Cost.Seconds, x.Cost.Seconds = 0, 0
	if x != want || shown.ChatCalls != lines || shown.PromptTokens != lines*prompt || shown.CompletionTokens != lines*completion {
		t.Errorf("import printed %+v; the memories show %+v, want %d chat calls of %d+%d tokens each", x, want, lines, prompt, completion)
	}
	if math.Abs(seconds-shown.Seconds) > 0.001 || seconds <= 0 {
		t.Errorf("import printed %.3f s; the memories show %.6f s", seconds, shown.Seconds)
	}
}
