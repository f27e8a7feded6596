package access

import "regexp"

// secretPatterns recognise credentials that must never be stored as memory: the seed
// notes say sensitive material is kept out of memory altogether. Each has a reason a
// client can act on; none echoes the matched text.
var secretPatterns = []struct {
	reason string
	re     *regexp.Regexp
}{
	{"a private key", regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
	{"an AWS access key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"an API key", regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}`)},
	{"a GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})`)},
	{"a Slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"a JSON web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"a bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*`)},
	{"a password or secret in key=value form", regexp.MustCompile(
		`(?i)\b(?:password|passwd|pwd|passphrase|secret|client_secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b["']?\s*[:=]\s*["']?[^\s"',;]{4,}`)},
	{"credentials in a URL", regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]{3,}@`)},
}

// FindSecret returns the reason the first credential found in text is refused, or ""
// when there is none.
func FindSecret(text string) string {
	for _, p := range secretPatterns {
		if p.re.MatchString(text) {
			return p.reason
		}
	}
	return ""
}
