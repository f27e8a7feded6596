package client

import (
	"strings"
	"testing"
	"time"
)

func TestParse_CSV(t *testing.T) {
	data := "agent_id,content,visibility,reference_time,metadata\n" +
		"a1,\"Alice works at Acme, as an engineer.\",public,2024-03-01T00:00:00Z,\"{\"\"src\"\": \"\"crm\"\"}\"\n" +
		"a1,no time,,yesterday,\n" +
		"a1,bad metadata,,,[1]\n" +
		"a1,,,,\n"
	lines, err := parse("m.csv", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	good := lines[0]
	if good.err != nil || good.number != 2 || good.memory.Messages != "Alice works at Acme, as an engineer." ||
		good.memory.Visibility != "public" || good.memory.Metadata["src"] != "crm" || good.memory.ReferenceTime.Year() != 2024 {
		t.Errorf("first row: %+v", good)
	}
	for i, want := range []string{"reference_time", "metadata", "content or messages"} {
		if l := lines[i+1]; l.err == nil || !strings.Contains(l.err.Error(), want) {
			t.Errorf("row %d: %v, want an error about %s", l.number, l.err, want)
		}
	}
	if _, err := parse("m.csv", []byte("agent,text\nx,y\n")); err == nil {
		t.Error("a CSV without agent_id and content columns was accepted")
	}
}

func TestParse_JSONLines(t *testing.T) {
	data := `{"agent_id":"a1","content":"one"}` + "\n\n" +
		`{"agent_id":"a1","messages":[{"role":"user","content":"two"}]}` + "\n" +
		`{"agent_id":"a1","content":"x","messages":"y"}` + "\n" +
		`{"agent_id":"a1","group_id":"agent-other-private","content":"forged"}` + "\n" +
		`not json` + "\n"
	lines, err := parse("m.jsonl", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 5 || lines[0].err != nil || lines[1].err != nil || lines[1].number != 3 {
		t.Fatalf("%+v", lines)
	}
	for _, l := range lines[2:] {
		if l.err == nil {
			t.Errorf("line %d was accepted", l.number)
		}
	}
	if _, err := parse("m.txt", nil); err == nil {
		t.Error("a .txt file was accepted")
	}
}

// An exported memory written again keeps what its writer set; a line written by hand
// without a reference_time sends none (the write's time), never year 1.
func TestStored_Memory(t *testing.T) {
	at := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	m := Stored{AgentID: "a", Space: "team:t1", Content: "x", ReferenceTime: at, Tags: []string{"k"}}.Memory()
	if m.Visibility != "team" || m.Team != "t1" || m.ReferenceTime == nil || !m.ReferenceTime.Equal(at) || m.Messages != "x" {
		t.Errorf("memory %+v, want team t1, the reference time and the content", m)
	}
	if m := (Stored{AgentID: "a", Space: "private", Content: "x"}).Memory(); m.ReferenceTime != nil {
		t.Errorf("a stored memory with no reference time gave %v", m.ReferenceTime)
	}
}
