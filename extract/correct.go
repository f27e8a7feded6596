package extract

import (
	"regexp"
	"slices"
	"strings"

	"github.com/memgate/memgate/graph"
)

// A correction names what it corrects: "Biscuit is a basset hound, not a beagle",
// "we went to Porto instead of Lisbon", "rather than tea", "not a beagle but a basset
// hound". denials holds those forms; the phrase denied is at most four words after an
// article or possessive, up to the punctuation, "but" or the end that closes it.
var denials = func() []*regexp.Regexp {
	const phrase = `(?:(?:a|an|the|my|his|her|their|our)\s+)?([\p{L}\p{N}][\p{L}\p{N}'’-]*(?:\s+[\p{L}\p{N}][\p{L}\p{N}'’-]*){0,3}?)`
	const closed = `(?:\s*[,.;:!?)]|\s+but\b|\s*$)`
	var out []*regexp.Regexp
	for _, cue := range []string{`,\s*(?:and\s+|but\s+)?not`, `\b(?:instead\s+of|rather\s+than)`, `\bnot`} {
		tail := closed
		if cue == `\bnot` { // a bare "not" corrects only as "not Y but X"
			tail = `\s+but\b`
		}
		out = append(out, regexp.MustCompile(`(?i)`+cue+`\s+`+phrase+tail))
	}
	return out
}()

// Denied are the phrases a memory's text says are not so (denials), normalised.
func Denied(text string) []string {
	var out []string
	for _, d := range denials {
		for _, m := range d.FindAllStringSubmatch(text, -1) {
			p := strings.Join(nameWords(m[1]), " ")
			if p != "" && !graph.StopWord(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// A retraction takes back what its speaker has just said: "scratch that", "strike
// that", "forget what I said", "ignore that", "disregard what I just said", "I take
// that back". The cue closes a clause, so "ignore that email" and "scratch that itch"
// retract nothing.
var retraction = regexp.MustCompile(`(?i)(?:\b(?:scratch|strike|forget|ignore|disregard)\s+(?:that|what\s+i\s+(?:just\s+)?said)|\bi\s+take\s+(?:that|it)\s+back)\s*(?:[,.;:!?)–—-]|$)`)

// fillers are the words that may open a line before its retraction without saying
// anything: "oh wait, sorry, scratch that".
var fillers = map[string]bool{"oh": true, "wait": true, "sorry": true, "no": true, "um": true, "uh": true, "ok": true,
	"okay": true, "hmm": true, "actually": true, "well": true, "ah": true, "and": true, "please": true, "just": true}

// Retained is what a memory's text still states once its speakers' retractions are
// applied. A retraction within a sentence takes back what the sentence said before it
// ("I'm moving to Denver, scratch that, to Austin" keeps "to Austin"); one opening a
// sentence, the sentence before it; one opening a line, the last sentence of the same
// speaker's line before it in the memory, or, when the memory has none, of the
// speaker's previous memory: earlier is then that speaker (as lineSpeakers names
// them), for the resolver to end what that memory said (withdrawn).
func Retained(text string) (kept, earlier string) {
	said := strings.Split(text, "\n")
	lines := slices.Clone(said)
	speakers := lineSpeakers(said)
	for i, line := range said {
		prefix, rest := splitPrefix(line)
		for cue := retraction.FindStringIndex(rest); cue != nil; cue = retraction.FindStringIndex(rest) {
			start := sentenceStart(rest[:cue[0]])
			after := strings.TrimLeft(rest[cue[1]:], " ,.;:!?-–—")
			switch {
			case slices.ContainsFunc(nameWords(rest[start:cue[0]]), func(w string) bool { return !fillers[w] }):
				rest = rest[:start] + after
			case start > 0:
				rest = rest[:lastSentence(rest[:start])] + after
			default:
				rest = after
				if !withdraw(lines[:i], speakers[:i], speakers[i]) {
					earlier = speakers[i]
				}
			}
		}
		if rest != line[len(prefix):] {
			lines[i] = prefix + rest
		}
	}
	return strings.Join(lines, "\n"), earlier
}

// withdrawn is the text of the speaker's previous memory once the retraction opening
// the next memory took back its last sentence (Retained's earlier).
func withdrawn(before, speaker string) string {
	lines := strings.Split(before, "\n")
	withdraw(lines, lineSpeakers(lines), speaker)
	return strings.Join(lines, "\n")
}

// withdraw cuts the last sentence of speaker's last line of lines; false when speaker
// said none.
func withdraw(lines, speakers []string, speaker string) bool {
	j := len(lines) - 1
	for j >= 0 && (speakers[j] != speaker || strings.TrimSpace(lines[j]) == "") {
		j--
	}
	if j < 0 {
		return false
	}
	prefix, rest := splitPrefix(lines[j])
	lines[j] = prefix + rest[:lastSentence(rest)]
	return true
}

// splitPrefix splits a line into its "Name (role): " prefix and what it says.
func splitPrefix(line string) (prefix, rest string) {
	if m := speakerLine.FindStringIndex(line); m != nil {
		return line[:m[1]], line[m[1]:]
	}
	return "", line
}

// lastSentence is where the last sentence of text begins, its closing punctuation
// aside.
func lastSentence(text string) int {
	return sentenceStart(strings.TrimRight(text, " .!?"))
}

// sentenceStart is where the last sentence of text begins.
func sentenceStart(text string) int {
	if m := sentenceBreak.FindAllStringIndex(text, -1); m != nil {
		return m[len(m)-1][1]
	}
	return 0
}

var sentenceBreak = regexp.MustCompile(`[.!?]+\s+`)

// lineSpeakers is who says each line, as its "Name (role):" prefix gives it; a line
// without one continues the line before it, and text without any is unprefixed.
func lineSpeakers(lines []string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		name, role := lineRole(line)
		switch {
		case name != "" || role != "":
			out[i] = name + "\x00" + role
		case i > 0:
			out[i] = out[i-1]
		default:
			out[i] = unprefixed
		}
	}
	return out
}

// unprefixed is the speaker of text no "Name (role):" prefix attributes.
const unprefixed = "\x00"

// correcting opens a sentence (or a line after its "Name (role):") that restates
// something as it is: "Actually, I work at Initech", "Correction: ...", "I meant ...",
// "Sorry, I meant ...".
var correcting = regexp.MustCompile(`(?i)(?:^|[.!?:\n]\s*)(?:(?:oh\s+)?(?:wait|sorry)[,.!]?\s+)*(?:actually\s*,|correction\b|i\s+meant\b|to\s+correct\b)`)

// adding marks a statement made beside what holds, not in its place.
var adding = regexp.MustCompile(`(?i)\b(?:also|too|as well|another|again)\b`)

// corrected are the current facts of stored that the memory ep corrects or retracts,
// none of which it states itself:
//   - a fact about an entity it names (among entities) whose text says a phrase it
//     denies, as a whole word or words: "Correction: Biscuit is a basset hound, not a
//     beagle" corrects "adopted a beagle named Biscuit";
//   - when a sentence of it corrects ("Actually, I work at Initech"), a fact with the
//     source and relation of one of its new current facts (added) and another target,
//     unless that fact is said to be one more ("I also work at ...");
//   - when it retracts the speaker's previous memory (Retained) and before is that
//     memory, a fact before supports that before no longer states once the sentence
//     taken back is cut (withdrawn, stillStated).
//
// names are the entities' names by uuid.
func corrected(ep, before *graph.Episode, stored, added []*graph.Fact, entities []*graph.EntityNode, names map[string]string) []*graph.Fact {
	denied := Denied(ep.Content)
	named := map[string]bool{}
	for _, e := range entities {
		named[e.UUID] = true
	}
	replaced := map[[2]string][]string{} // source, relation -> the targets now stated
	if correcting.MatchString(ep.Content) {
		for _, f := range added {
			if f.InvalidAt == nil && !adding.MatchString(f.Fact) {
				k := [2]string{f.SourceUUID, f.Name}
				replaced[k] = append(replaced[k], f.TargetUUID)
			}
		}
	}
	var left map[string]bool // the stems of what before still states
	if _, speaker := Retained(ep.Content); speaker != "" && before != nil && slices.Contains(lineSpeakers(strings.Split(before.Content, "\n")), speaker) {
		left = stems(withdrawn(before.Content, speaker))
	}
	var out []*graph.Fact
	for _, f := range stored {
		if f.InvalidAt != nil || f.ExpiredAt != nil || slices.Contains(f.Episodes, ep.UUID) {
			continue
		}
		words := " " + strings.Join(nameWords(f.Fact), " ") + " "
		targets, restated := replaced[[2]string{f.SourceUUID, f.Name}]
		switch {
		case (named[f.SourceUUID] || named[f.TargetUUID]) &&
			slices.ContainsFunc(denied, func(p string) bool { return strings.Contains(words, " "+p+" ") }),
			restated && !slices.Contains(targets, f.TargetUUID),
			left != nil && slices.Contains(f.Episodes, before.UUID) && !stillStated(f, names, left):
			out = append(out, f)
		}
	}
	return out
}

// stillStated reports whether what is left of a memory (the stems of its words) names
// both ends of f and states its text (statedFact).
func stillStated(f *graph.Fact, names map[string]string, left map[string]bool) bool {
	src, tgt := names[f.SourceUUID], names[f.TargetUUID]
	return namedIn(src, left) && namedIn(tgt, left) &&
		statedFact(graph.ExtractedFact{Source: src, Target: tgt, Relation: f.Name, Fact: f.Fact}, left)
}
