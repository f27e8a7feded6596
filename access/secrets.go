package access

import (
	"regexp"
	"strings"
)

// secretPatterns recognise credentials that must never be stored as memory: the seed
// notes say sensitive material is kept out of memory altogether. Each has a reason a
// client can act on; none echoes the matched text. Where a pattern captures a value
// (a password in prose or key=value form), the value must look like one: not a word
// that describes passwords ("the password is required").
var secretPatterns = []struct {
	reason string
	re     *regexp.Regexp
}{
	{"a private key", regexp.MustCompile(`(?i)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
	{"an AWS access key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"an AWS secret access key", regexp.MustCompile(
		`(?i)\baws[_ .-]?secret(?:[_ .-]?access)?[_ .-]?key["']?\s*(?:[:=]|\bis\b)?\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`)},
	{"an API key", regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{"a GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})`)},
	{"a GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{"a Slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}|(?i)hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}`)},
	{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"a JSON web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"a bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*`)},
	{"a password or secret in key=value form", regexp.MustCompile(
		`(?i)(?:^|[^a-z0-9])(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|passphrase|passcode|secret|api[_-]?key|access[_-]?token|auth[_-]?token|private[_-]?key)` +
			`(?:[_-][a-z0-9]+)*["']?\s*[:=]\s*["']?([^\s"',;]{4,})`)},
	{"a password in a sentence", regexp.MustCompile(
		`(?i)\b(?:password|passwd|passphrase|passcode|pin code|wifi key)\s+(?:is|was|will be|=|reads)\s+(?:now\s+)?["'“]?([^\s"'”,;]{4,})`)},
	{"credentials in a URL", regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]{3,}@`)},
}

// notAValue are words that follow "password is" or "password:" when a sentence talks
// about a password rather than telling it.
var notAValue = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`required needed mandatory optional missing empty blank wrong incorrect
		invalid correct right expired old new same different too not also still never always only at least
		the a an any your my our their his her its this that these those one case sensitive stored saved
		hashed encrypted salted hidden masked redacted secret private shared reset changed rotated set
		unset generated random strong weak secure insecure long short simple complex complicated easy
		hard good bad fine ok okay managed handled kept known unknown forgotten lost visible unique
		must should needs will can cannot may might does did has have had being been policy rules
		manager managers field fields length characters chars digits letters hint hints prompt
		protected updated enforced checked validated none null nil undefined n/a tbd todo example`) {
		notAValue[w] = true
	}
}

// FindSecret returns the reason the first credential found in text is refused, or ""
// when there is none.
func FindSecret(text string) string {
	for _, p := range secretPatterns {
		if p.re.NumSubexp() == 0 {
			if p.re.MatchString(text) {
				return p.reason
			}
			continue
		}
		for _, m := range p.re.FindAllStringSubmatch(text, -1) {
			if looksLikeValue(m[1]) {
				return p.reason
			}
		}
	}
	return ""
}

// looksLikeValue tells a password from a word about passwords, a mask (********,
// xxxx) or a placeholder (<your key>).
func looksLikeValue(v string) bool {
	v = strings.ToLower(strings.TrimRight(v, ".!?:)"))
	return !notAValue[v] && strings.Trim(v, "*x.-_") != "" && !strings.ContainsAny(v[:1], "<[{$")
}
