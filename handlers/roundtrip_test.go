package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	memclient "github.com/memgate/memgate/client"
)

// The round trip of issue 32, point 3 (one mapping per shape): a memory written with
// every field a writer may set is read back whole through every surface: REST, MCP,
// the Go client, export and import, and an update that changes one field. Every
// property of a memory as openapi.json describes it is named in exactly one of
// writtenKeys, serverKeys and laterKeys, every property of a write is in the request
// the test sends, and the Go client's types have the same fields as the document, so
// a field added to the API but not to this test (or to the client) fails it.

// writtenKeys are the properties of a memory that show what its writer sent, as sent.
var writtenKeys = []string{"agent_id", "messages", "metadata", "reference_time", "source", "source_description",
	"tags", "priority", "expires_at", "confidence", "extract", "extraction_instructions"}

// serverKeys are the properties the server sets on every memory.
var serverKeys = []string{"id", "group_id", "space", "status", "attempts", "content", "created_at", "version", "written_by", "cost"}

// laterKeys are the properties a written memory does not have: set by a failure
// (last_error), a promotion, a compaction or reflection, a visibility rule, an update,
// or a search (score).
var laterKeys = []string{"last_error", "promoted_from", "promoted_by", "promoted_at", "derived_from",
	"visibility_rule", "updated_at", "updated_by", "score"}

// ingestionKeys are a memory's place in extraction and what it cost: its own, never
// copied.
var ingestionKeys = []string{"status", "attempts", "last_error", "cost"}

// specProperties are the property names of a schema of openapi.json.
func specProperties(t *testing.T, schema string) []string {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(doc.Components.Schemas[schema].Properties))
}

// jsonNames are the JSON names of a struct's fields.
func jsonNames(v any) []string {
	var names []string
	for f := range reflect.TypeOf(v).Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// asMap is v as a JSON object.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// canon is a JSON value with every RFC 3339 time in one UTC form, so that an instant
// compares equal however its offset was written.
func canon(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canon(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canon(e)
		}
		return out
	case string:
		if at, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return at.UTC().Format(time.RFC3339Nano)
		}
	}
	return v
}

// sameFields fails t for every key, but those skipped, that want and got do not hold
// alike: a key only one holds is a field lost (or invented) on the way.
func sameFields(t *testing.T, where string, want, got map[string]any, skip ...string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if slices.Contains(skip, k) {
			continue
		}
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			t.Errorf("%s: %s is lost: want %v", where, k, w)
		case !inWant:
			t.Errorf("%s: %s appeared: %v", where, k, g)
		case !reflect.DeepEqual(canon(w), canon(g)):
			t.Errorf("%s: %s = %v, want %v", where, k, g, w)
		}
	}
}

// holds fails t unless got holds every key of want alike, and no other key but the
// server's (serverKeys, laterKeys): what a memory shows of its writer's fields is
// exactly what was written.
func holds(t *testing.T, where string, want, got map[string]any) {
	t.Helper()
	sameFields(t, where, want, pick(got, slices.Collect(maps.Keys(want))...))
	sameFields(t, where, want, got, slices.Concat(serverKeys, laterKeys)...)
}

// in is c failing t: a subtest's mistake stops the subtest, not its parent.
func (c client) in(t *testing.T) client {
	c.t = t
	return c
}

// pick is m's keys named.
func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestRoundTrip writes a memory with every field (and a second with source json)
// through REST and reads every field back through REST GET, the Go client, MCP's
// get_memory and list_memories; writes one through MCP's add_memory with every field
// it takes; exports the agent's memories with client.Export and imports them for
// another agent with client.Import, comparing every field but those a write cannot
// set; and updates one field through PATCH and MCP's update_memory, checking that
// every other one, and the version the update replaced, is kept. It failed on
// dded73a: the Go client (Get, export) dropped 8 of the fields, import refused a line
// with tags or expires_at, updated_at was created_at, a PATCH of a json memory's text
// made it text.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "rt")
	ingest(t, "team-"+w.team)
	copyAgent := strings.Replace(w.agent, "-agent-", "-copy-", 1)
	w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": copyAgent}, nil)
	ctx := context.Background()
	goClient := memclient.New(srv.URL, w.owner.key, w.owner.requester)

	if got, want := specProperties(t, "Memory"), slices.Sorted(slices.Values(slices.Concat(writtenKeys, serverKeys, laterKeys))); !slices.Equal(got, want) {
		t.Fatalf("openapi.json's Memory has %v; this test knows %v: name each new property in one of its lists", got, want)
	}
	// Every property a write takes, each set to a value no default has (source json is
	// the one a list of messages cannot take: the second memory carries it). Times carry
	// nanoseconds and an offset; metadata every kind of JSON value.
	space := "team:" + w.team
	nanos := time.Date(2024, 3, 1, 9, 30, 15, 123456789, time.FixedZone("", 2*3600))
	expires := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second).Add(987654321)
	full := map[string]any{
		"agent_id": w.agent, "visibility": "team", "team": w.team,
		"messages": []map[string]any{
			{"role": "user", "name": "Dana", "content": "Dana moved to Lisbon in March.", "timestamp": "2024-03-01T07:30:00.5Z"},
			{"role": "assistant", "content": "Noted: Dana lives in Lisbon."},
		},
		"metadata": map[string]any{"channel": "slack", "thread": map[string]any{"id": "T-42", "replies": 3.0},
			"labels": []any{"a", "b"}, "score": 0.5, "pinned": true, "note": nil, "emoji": "café ☕"},
		"reference_time": nanos.Format(time.RFC3339Nano), "source": "message", "source_description": "slack thread export",
		"tags": []string{"travel", "Lisbon", "ünïcode"}, "priority": "high",
		"expires_at": expires.Format(time.RFC3339Nano), "confidence": 0.75, "extract": true,
		"extraction_instructions": "Dana is a Customer; her tier is gold.",
	}
	jsonDoc := map[string]any{
		"agent_id": w.agent, "visibility": "team", "team": w.team, "messages": `{"event":"deploy","service":"api"}`,
		"source": "json", "source_description": "deploy hook", "tags": []string{"ops"}, "priority": "low", "confidence": 0.0,
		"extract": false,
	}
	if got, want := slices.Sorted(maps.Keys(full)), specProperties(t, "NewMemory"); !slices.Equal(got, want) {
		t.Fatalf("the test writes %v; a write takes %v: write every field", got, want)
	}
	// The Go client's shapes are the API's, field for field.
	if got, want := jsonNames(memclient.Memory{}), specProperties(t, "NewMemory"); !slices.Equal(got, want) {
		t.Errorf("client.Memory has %v; a write takes %v", got, want)
	}
	if got, want := jsonNames(memclient.Stored{}), specProperties(t, "Memory"); !slices.Equal(got, want) {
		t.Errorf("client.Stored has %v; a memory shows %v", got, want)
	}
	if got, want := jsonNames(memclient.Cost{}), specProperties(t, "Cost"); !slices.Equal(got, want) {
		t.Errorf("client.Cost has %v; a memory's cost shows %v", got, want)
	}

	// written is what a memory shows of the request that wrote it.
	written := func(t *testing.T, req map[string]any) map[string]any {
		out := pick(asMap(t, req), writtenKeys...)
		out["space"], out["group_id"] = space, "team-"+w.team
		if out["extract"] == true {
			delete(out, "extract") // the default, not shown
		}
		if s, ok := out["messages"].(string); ok {
			delete(out, "messages")
			out["content"] = s
		}
		return out
	}
	// get reads a memory once its extraction is done.
	get := func(c client, id string) map[string]any {
		c.t.Helper()
		waitStatus(c.t, c, id)
		var m map[string]any
		c.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &m)
		return m
	}
	// sane checks the properties the server sets on a memory written between from and
	// to as id, and that it has none of laterKeys.
	sane := func(t *testing.T, where string, m map[string]any, id string, from, to time.Time) {
		t.Helper()
		if m["id"] != id || m["group_id"] != "team-"+w.team || m["space"] != space || m["status"] != "done" || m["version"] != 1.0 {
			t.Errorf("%s: id %v group_id %v space %v status %v version %v; want %s team-%s %s done 1",
				where, m["id"], m["group_id"], m["space"], m["status"], m["version"], id, w.team, space)
		}
		if n, ok := m["attempts"].(float64); !ok || (n < 1) != (m["extract"] == false) {
			t.Errorf("%s: attempts %v, extract %v; want at least one attempt, none without extraction", where, m["attempts"], m["extract"])
		}
		if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["created_at"])); err != nil || at.Before(from.Add(-time.Second)) || at.After(to.Add(time.Second)) {
			t.Errorf("%s: created_at %v, not between %v and %v", where, m["created_at"], from, to)
		}
		for _, k := range laterKeys {
			if _, ok := m[k]; ok {
				t.Errorf("%s: a written memory has %s: %v", where, k, m[k])
			}
		}
		// The offline pipeline calls no provider: its attempts cost time alone; a memory
		// stored without extraction costs nothing.
		cost, _ := m["cost"].(map[string]any)
		if got, want := slices.Sorted(maps.Keys(cost)), specProperties(t, "Cost"); !slices.Equal(got, want) {
			t.Errorf("%s: cost has %v, want %v", where, got, want)
		}
		for k, v := range cost {
			n, _ := v.(float64)
			if timed := k == "seconds" && m["extract"] != false; (n != 0) != timed {
				t.Errorf("%s: cost %v (extract %v): want time alone", where, cost, m["extract"])
				break
			}
		}
	}

	// REST: POST every field, GET every field back.
	var fullID, jsonID string
	var fullREST, jsonREST map[string]any
	t.Run("REST", func(t *testing.T) {
		owner := w.owner.in(t)
		start := time.Now()
		var a, b added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", full, &a)
		owner.must(http.StatusAccepted, "POST", "/v1/memories", jsonDoc, &b)
		fullID, jsonID = a.ID, b.ID
		fullREST, jsonREST = get(owner, fullID), get(owner, jsonID)
		end := time.Now()

		want := written(t, full)
		want["content"] = "Dana (user): Dana moved to Lisbon in March.\nassistant: Noted: Dana lives in Lisbon.\n"
		holds(t, "GET of the full memory", want, fullREST)
		sane(t, "GET of the full memory", fullREST, fullID, start, end)
		want = written(t, jsonDoc)
		want["reference_time"] = jsonREST["created_at"] // none written: the time of the write
		holds(t, "GET of the json memory", want, jsonREST)
		sane(t, "GET of the json memory", jsonREST, jsonID, start, end)

		// The Go client reads the same memory whole.
		for id, rest := range map[string]map[string]any{fullID: fullREST, jsonID: jsonREST} {
			stored, err := goClient.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			sameFields(t, "the Go client's Get", rest, asMap(t, stored))
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	// MCP: get_memory and list_memories show what REST does; add_memory keeps every
	// field it takes.
	t.Run("MCP", func(t *testing.T) {
		owner := w.owner.in(t)
		s := mcpSession(t, srv.URL, w.owner.key, w.owner.requester)
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		add := map[string]any{"agent_id": w.agent, "content": "Ravi prefers green tea over coffee.", "visibility": "team",
			"team": w.team, "reference_time": nanos.Format(time.RFC3339Nano), "expires_at": expires.Format(time.RFC3339Nano),
			"idempotency_key": "rt-" + w.agent, "extract": true, "extraction_instructions": "Ravi is a Customer."}
		for _, tool := range tools.Tools {
			if tool.Name != "add_memory" {
				continue
			}
			var schema struct{ Properties map[string]any }
			b, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
			if got, want := slices.Sorted(maps.Keys(schema.Properties)), slices.Sorted(maps.Keys(add)); !slices.Equal(got, want) {
				t.Fatalf("add_memory takes %v; the test sends %v: send every field", got, want)
			}
		}

		for id, rest := range map[string]map[string]any{fullID: fullREST, jsonID: jsonREST} {
			var got map[string]any
			if !callTool(t, s, "get_memory", map[string]any{"id": id}, &got) {
				t.Fatalf("get_memory: %v", got)
			}
			sameFields(t, "MCP get_memory", rest, got)
		}
		var page struct{ Items []map[string]any }
		if !callTool(t, s, "list_memories", map[string]any{"agent_id": w.agent, "space": space}, &page) {
			t.Fatalf("list_memories: %v", page)
		}
		listed := map[string]map[string]any{}
		for _, m := range page.Items {
			listed[fmt.Sprint(m["id"])] = m
		}
		sameFields(t, "MCP list_memories", fullREST, listed[fullID])
		sameFields(t, "MCP list_memories", jsonREST, listed[jsonID])

		start := time.Now()
		var acc, again map[string]any
		if !callTool(t, s, "add_memory", add, &acc) || !callTool(t, s, "add_memory", add, &again) {
			t.Fatalf("add_memory: %v %v", acc, again)
		}
		id := fmt.Sprint(acc["id"])
		if again["id"] != id || again["replayed"] != true {
			t.Errorf("add_memory again with its idempotency_key: %v, want %s replayed", again, id)
		}
		rest := get(owner, id)
		var got map[string]any
		if !callTool(t, s, "get_memory", map[string]any{"id": id}, &got) {
			t.Fatalf("get_memory: %v", got)
		}
		sameFields(t, "MCP get_memory of add_memory's", rest, got)
		// MCP writes text; its source_description names it (handlers/mcp.go).
		want := map[string]any{"agent_id": w.agent, "content": add["content"], "space": space, "group_id": "team-" + w.team,
			"reference_time": add["reference_time"], "expires_at": add["expires_at"], "source": "text", "source_description": "mcp",
			"extraction_instructions": add["extraction_instructions"]}
		holds(t, "MCP add_memory", want, got)
		sane(t, "MCP add_memory", got, id, start, time.Now())
	})
	if t.Failed() {
		t.FailNow()
	}

	// Export and import: memgate export's file, each memory given to another agent of
	// the owner as memgate import reads it, stores every field it carries.
	t.Run("ExportImport", func(t *testing.T) {
		owner := w.owner.in(t)
		var file bytes.Buffer
		memories, _, err := memclient.Export(ctx, goClient, w.agent, &file)
		if err != nil || memories != 3 {
			t.Fatalf("export: %d memories, %v", memories, err)
		}
		originals := map[string]map[string]any{} // as GET shows them, by content
		// The export file as memgate import reads it, each memory given to the copy
		// agent; its fact lines stay (import leaves them out: extraction makes them).
		var imported bytes.Buffer
		facts := 0
		for _, text := range strings.Split(strings.TrimSpace(file.String()), "\n") {
			var l struct{ Memory map[string]any }
			if err := json.Unmarshal([]byte(text), &l); err != nil {
				t.Fatal(err)
			}
			if l.Memory == nil {
				facts++
				imported.WriteString(text + "\n")
				continue
			}
			m := l.Memory
			var rest map[string]any
			owner.must(http.StatusOK, "GET", "/v1/memories/"+fmt.Sprint(m["id"]), nil, &rest)
			sameFields(t, "export", rest, m)
			originals[fmt.Sprint(m["content"])] = rest
			copied := maps.Clone(m)
			copied["agent_id"] = copyAgent
			b, _ := json.Marshal(map[string]any{"memory": copied})
			imported.Write(append(b, '\n'))
		}
		if facts == 0 {
			t.Fatal("the export holds no fact: the import's leaving them out is not shown")
		}
		// What a write cannot set, by design, is the new memory's own: the id,
		// created_at, the ingestion state and version history; provenance is the
		// server's (none here); the space is written as visibility and team, and a
		// conversation's content is rendered from its messages again.
		path := filepath.Join(t.TempDir(), "export.jsonl")
		if err := os.WriteFile(path, imported.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		var rejects bytes.Buffer
		sum, err := memclient.Import(ctx, memclient.New(srv.URL, owner.key, owner.requester),
			memclient.ImportOptions{Path: path, BatchSize: 10, Workers: 1, Rejects: &rejects})
		if err != nil || sum.Lines != len(originals) || sum.Accepted != len(originals) {
			t.Fatalf("import of the export: %+v %v %s; want its %d memories accepted", sum, err, rejects.String(), len(originals))
		}

		var page struct{ Items []map[string]any }
		owner.must(http.StatusOK, "GET", "/v1/memories?agent_id="+url.QueryEscape(copyAgent), nil, &page)
		if len(page.Items) != len(originals) {
			t.Fatalf("imported %d memories, want %d", len(page.Items), len(originals))
		}
		for _, m := range page.Items {
			copied := get(owner, fmt.Sprint(m["id"]))
			original := originals[fmt.Sprint(copied["content"])]
			if original == nil {
				t.Fatalf("an imported memory matches no exported one: %v", copied)
			}
			if copied["agent_id"] != copyAgent {
				t.Errorf("imported agent_id %v, want %s", copied["agent_id"], copyAgent)
			}
			sameFields(t, "import of "+fmt.Sprint(original["id"]), original, copied,
				slices.Concat([]string{"id", "created_at", "agent_id"}, ingestionKeys)...)
		}
	})

	// An update changes what it is given and keeps every other field: PATCH of the
	// messages alone (the json memory's stays json), MCP update_memory of the tags
	// alone; the version it replaced holds the memory as it was.
	t.Run("Update", func(t *testing.T) {
		owner := w.owner.in(t)
		changed := []string{"messages", "content", "version", "updated_at", "updated_by"}
		for _, c := range []struct {
			id       string
			messages any
			content  string
		}{
			{fullID, []map[string]any{{"role": "user", "name": "Dana", "content": "Dana moved to Porto in April."}}, "Dana (user): Dana moved to Porto in April.\n"},
			{jsonID, `{"event":"rollback","service":"api"}`, `{"event":"rollback","service":"api"}`},
		} {
			before := get(owner, c.id)
			start := time.Now()
			var answer map[string]any
			owner.must(http.StatusOK, "PATCH", "/v1/memories/"+c.id, map[string]any{"messages": c.messages}, &answer)
			after := get(owner, c.id)
			sameFields(t, "PATCH of messages: the answer", after, answer, ingestionKeys...)
			sameFields(t, "PATCH of messages", before, after, slices.Concat(changed, ingestionKeys)...)
			if after["content"] != c.content {
				t.Errorf("PATCH of messages: content %q, want %q", after["content"], c.content)
			}
			if _, text := c.messages.(string); text {
				if m, ok := after["messages"]; ok {
					t.Errorf("PATCH of messages with a string: messages %v, want none", m)
				}
			} else if want := asMap(t, map[string]any{"m": c.messages})["m"]; !reflect.DeepEqual(after["messages"], want) {
				t.Errorf("PATCH of messages: messages %v, want %v", after["messages"], want)
			}
			if after["version"] != before["version"].(float64)+1 {
				t.Errorf("PATCH of messages: version %v after %v", after["version"], before["version"])
			}
			if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(after["updated_at"])); err != nil ||
				at.Before(start.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
				t.Errorf("PATCH of messages: updated_at %v, not since %v", after["updated_at"], start)
			}
			if after["status"] != "done" {
				t.Errorf("PATCH of messages: status %v after extraction", after["status"])
			}
			if after["updated_by"] != w.owner.requester || after["written_by"] != w.owner.requester {
				t.Errorf("PATCH of messages: written by %v, updated by %v, want %s for both", after["written_by"], after["updated_by"], w.owner.requester)
			}

			var versions struct {
				Versions []map[string]any
			}
			owner.must(http.StatusOK, "GET", "/v1/memories/"+c.id+"/versions", nil, &versions)
			if len(versions.Versions) != 1 {
				t.Fatalf("versions: %d, want 1", len(versions.Versions))
			}
			sameFields(t, "the version PATCH replaced", before, versions.Versions[0], "replaced_at", "replaced_by")
			if v := versions.Versions[0]; v["replaced_at"] != after["updated_at"] || v["replaced_by"] != w.owner.requester {
				t.Errorf("the version PATCH replaced: replaced_at %v by %v, want %v by %s", v["replaced_at"], v["replaced_by"], after["updated_at"], w.owner.requester)
			}
		}

		s := mcpSession(t, srv.URL, w.owner.key, w.owner.requester)
		before := get(owner, fullID)
		var answer map[string]any
		if !callTool(t, s, "update_memory", map[string]any{"id": fullID, "tags": []string{"moved"}}, &answer) {
			t.Fatalf("update_memory: %v", answer)
		}
		after := get(owner, fullID)
		sameFields(t, "MCP update_memory of tags: the answer", after, answer)
		sameFields(t, "MCP update_memory of tags", before, after, "tags", "version", "updated_at")
		if !reflect.DeepEqual(after["tags"], []any{"moved"}) || after["version"] != 3.0 {
			t.Errorf("MCP update_memory of tags: tags %v version %v", after["tags"], after["version"])
		}
	})
}
