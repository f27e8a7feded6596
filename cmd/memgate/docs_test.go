package main

import (
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository, seen from this package's folder.
const repoRoot = "../.."

// markdownFiles lists the repository's Markdown files, relative to its root: every
// *.md outside hidden folders (.git, .data with its virtual environments), vendor,
// node_modules and build output.
func markdownFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules" || name == "target") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if !slices.Contains(files, "README.md") {
		tb.Fatalf("found no README.md under %s", repoRoot)
	}
	return files
}

var (
	fence          = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	htmlComment    = regexp.MustCompile(`<!--[\s\S]*?-->`)
	inlineLink     = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	referenceDef   = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*(\S+)`)
	autolink       = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>`)
	bareURL        = regexp.MustCompile(`(?i)\b(?:https?|ftp)://[^\s)>\]|]+|\bwww\.[a-z0-9-]+\.[^\s)>\]|]+`)
	htmlAttr       = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*["']([^"']*)["']`)
	scheme         = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	atxHeading     = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`)
	linkInHeading  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	routeMention   = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/[^`?\\s]*)")
	openAPIMethods = []string{"get", "post", "put", "patch", "delete"}
)

// prose is a Markdown text without its fenced code blocks, code spans and HTML
// comments: what GitHub renders as links is in what is left.
func prose(text string) string {
	var out []string
	inFence, marker := false, ""
	for _, line := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case !inFence:
				inFence, marker = true, m[1]
				out = append(out, "")
				continue
			case m[1] == marker:
				inFence = false
				out = append(out, "")
				continue
			}
		}
		if inFence {
			out = append(out, "")
			continue
		}
		out = append(out, line)
	}
	text = strings.Join(out, "\n")
	text = htmlComment.ReplaceAllString(text, "")
	return withoutCodeSpans(text)
}

// withoutCodeSpans drops every code span: a run of backticks, what follows, and the
// next run of as many backticks. A run with no closing one stays as it is.
func withoutCodeSpans(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			return b.String() + text
		}
		b.WriteString(text[:i])
		n := i
		for n < len(text) && text[n] == '`' {
			n++
		}
		run := text[i:n]
		closing := -1
		for j := n; j < len(text); {
			k := strings.Index(text[j:], run)
			if k < 0 {
				break
			}
			start, end := j+k, j+k+len(run)
			if end < len(text) && text[end] == '`' {
				for end < len(text) && text[end] == '`' {
					end++
				}
				j = end // a longer run does not close this one
				continue
			}
			closing = start
			break
		}
		if closing < 0 {
			b.WriteString(run)
			text = text[n:]
			continue
		}
		text = text[closing+len(run):]
	}
}

// links returns the destinations of every link in a Markdown text: inline links and
// images, reference definitions, autolinks, HTML href and src, and the bare URLs
// GitHub turns into links.
func links(text string) []string {
	text = prose(text)
	var out []string
	for _, re := range []*regexp.Regexp{inlineLink, referenceDef, autolink, htmlAttr} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			out = append(out, strings.Trim(m[1], "<>"))
		}
	}
	out = append(out, bareURL.FindAllString(text, -1)...)
	return out
}

// anchors returns the anchors GitHub gives the headings of a Markdown text: the
// heading's text lower-cased, spaces turned into hyphens, punctuation other than
// hyphens and underscores dropped; a repeated anchor gets -1, -2, ...
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence, marker := false, ""
	for _, line := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			if !inFence {
				inFence, marker = true, m[1]
				continue
			}
			if m[1] == marker {
				inFence = false
				continue
			}
		}
		m := atxHeading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		heading := linkInHeading.ReplaceAllString(m[2], "$1")
		heading = strings.NewReplacer("`", "", "*", "").Replace(heading)
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		out[anchor] = true
	}
	return out
}

// TestDocs_Links: every link of every Markdown file of the repository stays inside
// it and lands: no scheme (http, https, mailto, ...), no absolute path, no path out
// of the repository, a file or folder that exists, and an #anchor that is a heading
// of the Markdown file it names.
func TestDocs_Links(t *testing.T) {
	texts := map[string]string{}
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		texts[file] = string(b)
	}
	for file, text := range texts {
		for _, link := range links(text) {
			if problem := checkLink(file, link, texts); problem != "" {
				t.Errorf("%s: link %q %s", file, link, problem)
			}
		}
	}
}

// checkLink says what is wrong with a link of file, or "" when it lands.
func checkLink(file, link string, texts map[string]string) string {
	switch {
	case link == "":
		return "is empty"
	case scheme.MatchString(link) || strings.HasPrefix(strings.ToLower(link), "www."):
		return "leaves the repository: link to a file of the repository instead"
	case strings.HasPrefix(link, "/"):
		return "is absolute: write it relative to the file"
	}
	target, anchor, _ := strings.Cut(link, "#")
	if p, err := url.PathUnescape(target); err == nil {
		target = p
	}
	name := file
	if target != "" {
		name = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), target)))
		if name == ".." || strings.HasPrefix(name, "../") {
			return "leaves the repository"
		}
		info, err := os.Stat(filepath.Join(repoRoot, name))
		if err != nil {
			return "names a file that does not exist"
		}
		if info.IsDir() {
			if anchor != "" {
				return "has an anchor on a folder"
			}
			return ""
		}
	}
	if anchor == "" {
		return ""
	}
	text, ok := texts[name]
	if !ok {
		if !strings.HasSuffix(name, ".md") {
			return "has an anchor on a file that is not Markdown"
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			return "names a file that cannot be read"
		}
		text = string(b)
	}
	if !anchors(text)[anchor] {
		return "names a heading " + name + " does not have"
	}
	return ""
}

func TestDocs_LinkChecker(t *testing.T) {
	text := "# Top\n\n## Host keys, bindings and end-user JWTs\n\n## Targets of issue 21, as measured\n\n## Top\n\n" +
		"```sh\ncurl https://in.a/fence\n```\n\nsee `http://in.a/span` and [x](docs/a.md#b \"t\") and <https://c.d> " +
		"and https://e.f/g, www.h.example and [r]: ../s.md\n<!-- http://in.a/comment -->\n"
	got := links(text)
	want := []string{"docs/a.md#b", "https://c.d", "https://e.f/g,", "www.h.example"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("links: %q not found in %q", w, got)
		}
	}
	for _, g := range got {
		if strings.Contains(g, "in.a") {
			t.Errorf("links: %q is code or a comment, not a link", g)
		}
	}
	a := anchors(text)
	for _, w := range []string{"top", "top-1", "host-keys-bindings-and-end-user-jwts", "targets-of-issue-21-as-measured"} {
		if !a[w] {
			t.Errorf("anchors: %q missing from %v", w, a)
		}
	}
	texts := map[string]string{"docs/x.md": text}
	for link, bad := range map[string]bool{"#top": false, "#nowhere": true, "../README.md": false,
		"../README.md#nowhere": true, "../../outside.md": true, "/README.md": true, "mailto:a@b": true,
		"http://127.0.0.1:8080": true, "concepts.md#the-access-model": false, "nothere.md": true} {
		if problem := checkLink("docs/x.md", link, texts); (problem != "") != bad {
			t.Errorf("checkLink(%q) = %q, want a problem: %v", link, problem, bad)
		}
	}
}

// TestDocs_Routes: the route list is handlers/openapi.json, and docs/api.md says what
// every route of it does (it names each as `METHOD /path`); and no page names a route
// that openapi.json lacks.
func TestDocs_Routes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "handlers", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for path, ops := range spec.Paths {
		for method := range ops {
			if slices.Contains(openAPIMethods, method) {
				routes[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	if len(routes) == 0 {
		t.Fatal("openapi.json lists no routes")
	}
	api, err := os.ReadFile(filepath.Join(repoRoot, "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	for route := range routes {
		if !strings.Contains(string(api), "`"+route+"`") {
			t.Errorf("docs/api.md does not describe %s (name it as `%s`)", route, route)
		}
	}
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routeMention.FindAllStringSubmatch(string(b), -1) {
			if route := m[1] + " " + m[2]; !routes[route] {
				t.Errorf("%s names %s, which handlers/openapi.json does not have", file, route)
			}
		}
	}
}
