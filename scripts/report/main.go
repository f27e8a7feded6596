// Command report writes a Markdown report (RELIABILITY.md) from a template and the
// structured output of the runs it describes: the events of `go test -json`, read
// from standard input, several runs one after another. Nothing in the report is typed
// by hand: each figure is a line a test logged, each verdict the test's own result.
//
//	go run ./scripts/report -template scripts/reliability.md.tmpl -out RELIABILITY.md < run.json
//
// The template's functions:
//
//	{{result "TestName"}}          PASS (12.3s), FAIL (...), or "did not run"
//	{{logs "TestName" "prefix"}}   the lines TestName and its subtests logged that start with prefix
//	{{fuzz}}                       one table row per fuzz target that ran: target, package, result
//	{{machine}}                    the date, the machine and the commit
//	{{env "NAME"}}                 an environment variable (the run's settings)
//
// It exits 1 when a test failed or a named test did not run, after writing the report.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"text/template"
	"time"
)

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type test struct {
	pkg     string
	action  string // pass, fail, skip, or "" while running
	elapsed float64
	logs    []string // what the test logged with t.Log, without the file:line prefix
	fuzz    string   // the last "fuzz: elapsed ..." line of a fuzz run
}

// logged is a t.Log line as go test prints it: indented, file:line, the message.
var logged = regexp.MustCompile(`^\s+\w+\.go:\d+: (.*)$`)

func main() {
	tmplPath := flag.String("template", "", "the Markdown template")
	out := flag.String("out", "", "the report to write")
	flag.Parse()
	if *tmplPath == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: report -template FILE -out FILE < go-test-json")
		os.Exit(2)
	}
	tests, order, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	failed := false
	fail := func(format string, args ...any) {
		failed = true
		fmt.Fprintf(os.Stderr, "report: "+format+"\n", args...)
	}
	for _, name := range order {
		if tests[name].action == "fail" {
			fail("%s failed", name)
		}
	}
	funcs := template.FuncMap{
		"result": func(name string) string {
			t, ok := tests[name]
			if !ok || t.action == "" {
				fail("%s did not run", name)
				return "did not run"
			}
			return fmt.Sprintf("%s (%.1fs)", strings.ToUpper(t.action), t.elapsed)
		},
		"logs": func(name, prefix string) string {
			var lines []string
			for _, n := range order {
				if n == name || strings.HasPrefix(n, name+"/") {
					for _, l := range tests[n].logs {
						if strings.HasPrefix(l, prefix) {
							lines = append(lines, l)
						}
					}
				}
			}
			if len(lines) == 0 {
				fail("%s logged no line starting %q", name, prefix)
				return "(no result: see the run's output)"
			}
			return strings.Join(lines, "\n")
		},
		"fuzz": func() string {
			var rows []string
			for _, n := range order {
				if t := tests[n]; strings.HasPrefix(n, "Fuzz") && t.fuzz != "" {
					rows = append(rows, fmt.Sprintf("| %s | %s | %s: %s |", n, t.pkg, strings.ToUpper(t.action), t.fuzz))
				}
			}
			if len(rows) == 0 {
				fail("no fuzz target ran")
			}
			return strings.Join(rows, "\n")
		},
		"machine": machine,
		"env":     os.Getenv,
	}
	tmpl, err := template.New("report").Funcs(funcs).ParseFiles(*tmplPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	err = tmpl.ExecuteTemplate(f, tmplName(*tmplPath), nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "report: wrote", *out)
	if failed {
		os.Exit(1)
	}
}

func tmplName(path string) string { return path[strings.LastIndex(path, "/")+1:] }

// read collects the tests of a stream of go test -json events, in the order they
// started. Lines that are not events (a build failure's text) are echoed to stderr.
func read(r io.Reader) (map[string]*test, []string, error) {
	tests := map[string]*test{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			fmt.Fprintln(os.Stderr, sc.Text())
			continue
		}
		if e.Test == "" {
			continue
		}
		t, ok := tests[e.Test]
		if !ok || e.Action == "run" && t.action != "" { // a test run again (another step) starts afresh
			t = &test{pkg: e.Package}
			if !ok {
				order = append(order, e.Test)
			}
			tests[e.Test] = t
		}
		switch e.Action {
		case "pass", "fail", "skip":
			t.action, t.elapsed = e.Action, e.Elapsed
		case "output":
			line := strings.TrimRight(e.Output, "\n")
			if m := logged.FindStringSubmatch(line); m != nil {
				t.logs = append(t.logs, m[1])
			} else if i := strings.Index(line, "fuzz: elapsed:"); i >= 0 {
				t.fuzz = line[i+len("fuzz: "):]
			}
		}
	}
	return tests, order, sc.Err()
}

// machine says where and when the report was made.
func machine() string {
	cpu := "an unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	commit := "an uncommitted tree"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = "commit " + strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("%s, %d cores, %s, %s, %s", time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpu,
		runtime.Version(), commit)
}
