package graph

import "time"

// End is the one way a fact stops holding: at is when it ended in the world, now when
// memgate learned it (ExpiredAt, kept if already set). An interval never inverts: an
// end before the fact's start leaves the start unknown (nil), recording a stated start
// as overruled by the later statement that ended it; an assumed start was never said.
// A fact already ended keeps its end.
func (f *Fact) End(at, now time.Time) {
	if f.InvalidAt != nil {
		return
	}
	if f.ValidAt != nil && at.Before(*f.ValidAt) {
		if !f.StartAssumed {
			f.OverruledStart = f.ValidAt
		}
		f.ValidAt, f.StartAssumed = nil, false
	}
	f.InvalidAt = &at
	if f.ExpiredAt == nil {
		f.ExpiredAt = &now
	}
}

// Start records a start the text stated. It replaces an assumed one, and fills an
// unknown one unless the fact ended before it (a later statement's end stands).
func (f *Fact) Start(at time.Time) {
	if f.InvalidAt != nil && !at.Before(*f.InvalidAt) {
		return
	}
	if f.ValidAt == nil || f.StartAssumed {
		f.ValidAt, f.StartAssumed = &at, false
	}
}

// DateInWords is t as a reader says it, at the precision a statement gives: "2024"
// for the first instant of a year, "March 2024" for that of a month, else "2 March
// 2024" (memgate stores "in March 2024" as its first instant).
func DateInWords(t time.Time) string {
	t = t.UTC()
	switch {
	case t != t.Truncate(24*time.Hour) || t.Day() != 1:
		return t.Format("2 January 2006")
	case t.Month() == time.January:
		return t.Format("2006")
	}
	return t.Format("January 2006")
}

// StatedSince is how a current fact's summary line says when it began: "since March
// 2024" for a start the text stated, "" for an assumed or unknown one, which a reader
// must never take for a stated date.
func (f *Fact) StatedSince() string {
	if f.ValidAt == nil || f.StartAssumed {
		return ""
	}
	return "since " + DateInWords(*f.ValidAt)
}

// TimeInWords is how a context block says when a fact held: "since March 2024", or
// "from March 2024 until May 2025", with "start unknown" for a start the text never
// stated (assumed or unknown), which a reader must never take for a date.
func (f *Fact) TimeInWords() string {
	start := f.StatedSince()
	switch {
	case f.InvalidAt == nil && start == "":
		return "start unknown"
	case f.InvalidAt == nil:
		return start
	case start == "":
		return "start unknown, until " + DateInWords(*f.InvalidAt)
	}
	return "from " + DateInWords(*f.ValidAt) + " until " + DateInWords(*f.InvalidAt)
}
