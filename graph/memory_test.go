package graph

import (
	"testing"
	"time"
)

func TestTurnBefore(t *testing.T) {
	at := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	e := &Episode{UUID: "e", GroupID: "g", AgentID: "a", ValidAt: at, CreatedAt: at}
	turn := func(id, group, agent string, before, createdBefore time.Duration) *Episode {
		return &Episode{UUID: id, GroupID: group, AgentID: agent, ValidAt: at.Add(-before), CreatedAt: at.Add(-createdBefore)}
	}
	for _, c := range []struct {
		name    string
		earlier []*Episode
		want    string
	}{
		{"none", nil, ""},
		{"a minute before", []*Episode{turn("p", "g", "a", time.Minute, time.Second)}, "p"},
		{"at the window's edge", []*Episode{turn("p", "g", "a", TurnWindow, time.Second)}, "p"},
		{"past the window", []*Episode{turn("p", "g", "a", TurnWindow+time.Second, time.Second)}, ""},
		{"said after it", []*Episode{turn("p", "g", "a", -time.Second, time.Second)}, ""},
		{"another agent's", []*Episode{turn("p", "g", "b", time.Minute, time.Second)}, ""},
		{"another space's", []*Episode{turn("p", "h", "a", time.Minute, time.Second)}, ""},
		{"itself", []*Episode{turn("e", "g", "a", time.Minute, time.Second)}, ""},
		{"the latest said", []*Episode{turn("p", "g", "a", 2*time.Minute, time.Second), turn("q", "g", "a", time.Minute, 2*time.Second)}, "q"},
		{"at one time, the later written", []*Episode{turn("p", "g", "a", time.Minute, 2*time.Second), turn("q", "g", "a", time.Minute, time.Second)}, "q"},
		{"at its time, written before it", []*Episode{turn("p", "g", "a", 0, time.Second)}, "p"},
		{"at its time, written after it", []*Episode{turn("p", "g", "a", 0, -time.Second)}, ""},
	} {
		got := ""
		if b := TurnBefore(e, c.earlier); b != nil {
			got = b.UUID
		}
		if got != c.want {
			t.Errorf("%s: turn before %q, want %q", c.name, got, c.want)
		}
	}
}
