package graph_test

import (
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// TestFindRelativeTimes: each expression resolved against its reference time, across
// the ends of weeks, months and years, and what is not placed.
func TestFindRelativeTimes(t *testing.T) {
	monday := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)  // Monday 8 May 2023
	newYear := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)   // Monday 1 January 2024
	leap := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)      // Friday 1 March 2024
	sunday := time.Date(2023, 12, 31, 20, 0, 0, 0, time.UTC) // Sunday 31 December 2023
	july := time.Date(2023, 7, 15, 0, 0, 0, 0, time.UTC)     // Saturday 15 July 2023
	for _, c := range []struct {
		text string
		ref  time.Time
		want string // Words of the one expression found; "" for none
	}{
		{"I went to a support group yesterday.", monday, "7 May 2023"},
		{"Yesterday was great", newYear, "31 December 2023"},
		{"last night we talked", leap, "29 February 2024"},
		{"the day before yesterday", newYear, "30 December 2023"},
		{"see you tomorrow", sunday, "1 January 2024"},
		{"the day after tomorrow", leap, "3 March 2024"},
		{"today I ran", monday, "8 May 2023"},
		{"this morning", monday, "8 May 2023"},
		{"two days ago", leap, "28 February 2024"},
		{"3 days ago", newYear, "29 December 2023"},
		{"a few days ago", monday, "about 5 May 2023"},
		{"a week ago", monday, "the week of 1 May 2023"},
		{"two weeks ago", newYear, "the week of 18 December 2023"},
		{"last week", sunday, "the week of 18 December 2023"},
		{"this week", sunday, "the week of 25 December 2023"},
		{"next week", sunday, "the week of 1 January 2024"},
		{"in a week", monday, "the week of 15 May 2023"},
		{"last weekend", monday, "the weekend of 6 May 2023"},
		{"this weekend", monday, "the weekend of 13 May 2023"},
		{"this weekend", sunday, "the weekend of 30 December 2023"},
		{"next weekend", july, "the weekend of 22 July 2023"},
		{"last month", newYear, "December 2023"},
		{"a month ago", leap, "February 2024"},
		{"in a month", sunday, "January 2024"},
		{"next month", sunday, "January 2024"},
		{"two months ago", newYear, "November 2023"},
		{"last year", newYear, "2023"},
		{"a year ago", monday, "2022"},
		{"next year", sunday, "2024"},
		{"in 2 years", monday, "2025"},
		{"last Friday", monday, "5 May 2023"},
		{"last Monday", monday, "1 May 2023"},
		{"next Monday", monday, "15 May 2023"},
		{"next Friday", monday, "12 May 2023"},
		{"this Friday", monday, "12 May 2023"},
		{"next Tuesday", sunday, "2 January 2024"},
		{"next spring", monday, "spring 2024"},
		{"next spring", newYear, "spring 2024"},
		{"last summer", july, "summer 2022"},
		{"last summer", monday, "summer 2022"},
		{"this summer", monday, "summer 2023"},
		{"next summer", july, "summer 2024"},
		{"last fall", monday, "fall 2022"},
		{"last winter", newYear, "winter 2022"},
		{"this winter", newYear, "winter 2023"},
		{"next winter", newYear, "winter 2024"},
		{"next autumn", july, "fall 2023"},
		// Not placed: no expression, a bare weekday, a word that holds one.
		{"On Friday we met", monday, ""},
		{"recently", monday, ""},
		{"yesterdays", monday, ""},
		{"weekends are long", monday, ""},
	} {
		got := graph.FindRelativeTimes(c.text, c.ref)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%q: found %q, want nothing", c.text, got[0].Words())
		case c.want != "" && len(got) != 1:
			t.Errorf("%q on %s: found %d expressions, want one (%s)", c.text, c.ref.Format(time.DateOnly), len(got), c.want)
		case c.want != "" && got[0].Words() != c.want:
			t.Errorf("%q on %s: %q, want %q", c.text, c.ref.Format(time.DateOnly), got[0].Words(), c.want)
		}
	}
	if got := graph.FindRelativeTimes("yesterday", time.Time{}); len(got) != 0 {
		t.Errorf("without a reference time: %+v, want nothing", got)
	}
}

// TestAnnotateTimes: each expression followed by its resolution, the rest unchanged.
func TestAnnotateTimes(t *testing.T) {
	ref := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	for text, want := range map[string]string{
		"I went yesterday and will go again next week.": "I went yesterday (7 May 2023) and will go again next week (the week of 15 May 2023).",
		"Nothing relative here.":                        "Nothing relative here.",
		"Two years ago, in Paris.":                      "Two years ago (2021), in Paris.",
	} {
		if got := graph.AnnotateTimes(text, ref); got != want {
			t.Errorf("AnnotateTimes(%q) = %q, want %q", text, got, want)
		}
	}
	if got := graph.AnnotateTimes("yesterday", time.Time{}); got != "yesterday" {
		t.Errorf("without a reference time: %q", got)
	}
}

// StatedStart: a start the extractor gives on another day than the memory's stands;
// the memory's own day given, or none, is a relative time of the fact's words resolved
// against the reference time when there is one ("today" keeps the day, stated), and
// otherwise the reference time, assumed.
func TestStatedStart(t *testing.T) {
	ref := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC) // a Monday
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	earlier := day(2022, 3, 1)
	sameDay := day(2023, 5, 8)
	for _, c := range []struct {
		text    string
		given   *time.Time
		want    time.Time
		assumed bool
	}{
		{"Alice joined Globex in March 2022.", &earlier, earlier, false},
		{"We adopted Biscuit two days ago.", &ref, day(2023, 5, 6), false},
		{"We adopted Biscuit two days ago.", nil, day(2023, 5, 6), false},
		{"We adopted Biscuit yesterday.", &sameDay, day(2023, 5, 7), false},
		{"I started at Acme today.", &ref, ref, false},
		{"Caroline lives in Oslo.", &ref, ref, true},
		{"Caroline lives in Oslo.", &sameDay, ref, true},
		{"Caroline lives in Oslo.", nil, ref, true},
	} {
		got, assumed := graph.StatedStart(c.text, c.given, ref)
		if !got.Equal(c.want) || assumed != c.assumed {
			t.Errorf("%q given %v: %v assumed %v; want %v assumed %v", c.text, c.given, got, assumed, c.want, c.assumed)
		}
	}
}
