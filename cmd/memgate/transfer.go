package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/config"
)

// transfer runs import or export against a running memgate.
func transfer(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "http://127.0.0.1:8080", "memgate's address")
	requester := fs.String("requester", "", "the requester the memories belong to (X-Requester-Id)")
	batch := fs.Int("batch", 10, "memories per request (at most the server's memory.batch_max_items)")
	workers := fs.Int("workers", 4, "requests in flight")
	agent := fs.String("agent", "", "export: the agent whose memories to write")
	episodes := fs.Int("episodes", 10000, "loadtest: memories to write in all")
	loadRate := fs.Float64("rate", 0, "loadtest: requests a second in all (0: as fast as the writers can)")
	searchEvery := fs.Int("search-every", 10, "loadtest: a search after every n writes of a writer (0: none)")
	resendEvery := fs.Int("resend-every", 10, "loadtest: send every n-th write twice with the same Idempotency-Key (0: never)")
	retry := fs.Duration("retry", 30*time.Second, "loadtest and import: how long to send a write again, with its key, after a transport error or a 5xx (0: never)")
	out := fs.String("out", "", "export: the file to write (default standard output)")
	wait := fs.Duration("wait", 0, "import: then wait up to this long for the extraction of the memories stored, and print what it cost (0: do not)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cmd == "loadtest" {
		ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer cancel()
		res, err := client.Load(ctx, *base, os.Getenv(config.ClientKeyVariable), client.LoadOptions{Writers: *workers,
			Episodes: *episodes, Rate: *loadRate, SearchEvery: *searchEvery, ResendEvery: *resendEvery, Retry: *retry,
			Prefix: fmt.Sprintf("load-%d", time.Now().Unix())})
		if res != nil {
			fmt.Fprintf(stdout, "writes %d (p50 %v, p99 %v), searches %d (p50 %v, p99 %v), errors %v, in %v\n"+
				"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d\n",
				res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond), res.Searches,
				res.SearchP50.Round(time.Microsecond), res.SearchP99.Round(time.Microsecond), res.Errors, res.Elapsed.Round(time.Millisecond),
				res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
		}
		if err != nil {
			fmt.Fprintf(stderr, "memgate loadtest: %v\n", err)
			return 1
		}
		if res.Lost > 0 || res.Duplicates > 0 {
			return 1
		}
		return 0
	}
	if *requester == "" {
		fmt.Fprintf(stderr, "memgate %s: --requester is required\n", cmd)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	c := client.New(*base, os.Getenv(config.ClientKeyVariable), *requester)

	if cmd == "export" {
		if *agent == "" || fs.NArg() > 0 {
			fmt.Fprintln(stderr, "usage: memgate export --requester ID --agent ID [--out FILE]")
			return 2
		}
		w := stdout
		if *out != "" {
			f, err := os.Create(*out)
			if err != nil {
				fmt.Fprintf(stderr, "memgate export: %v\n", err)
				return 1
			}
			defer f.Close()
			w = f
		}
		memories, facts, err := client.Export(ctx, c, *agent, w)
		fmt.Fprintf(stderr, "exported %d memories and %d facts\n", memories, facts)
		if err != nil {
			fmt.Fprintf(stderr, "memgate export: %v\n", err)
			return 1
		}
		return 0
	}

	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: memgate import --requester ID [--url URL] [--batch N] [--workers N] [--wait DURATION] FILE")
		return 2
	}
	path := fs.Arg(0)
	rejects := &client.RejectsFile{Path: path + ".rejects.jsonl"}
	opts := client.ImportOptions{Path: path, BatchSize: *batch, Workers: *workers, Rejects: rejects, Retry: *retry,
		Retrying: func(err error) { fmt.Fprintf(stderr, "memgate import: %v; sending the batch again\n", err) }}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		var bar *progressbar.ProgressBar
		opts.Progress = func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionShowCount(),
					progressbar.OptionShowIts(), progressbar.OptionSetItsString("memories"), progressbar.OptionSetPredictTime(true))
			}
			_ = bar.Set(done)
		}
	} else {
		var last time.Time
		opts.Progress = func(done, total int) {
			if time.Since(last) >= 2*time.Second || done == total {
				last = time.Now()
				fmt.Fprintf(stderr, "imported %d of %d\n", done, total)
			}
		}
	}
	sum, err := client.Import(ctx, c, opts)
	rate := 0.0
	if secs := sum.Elapsed.Seconds(); secs > 0 {
		rate = float64(sum.Accepted+sum.Duplicates) / secs
	}
	where := ""
	if sum.Rejected > 0 {
		where = " (reasons in " + rejects.Path + ")"
	}
	fmt.Fprintf(stdout, "lines %d, accepted %d, duplicates %d, rejected %d%s, %.1f memories/s\n",
		sum.Lines, sum.Accepted, sum.Duplicates, sum.Rejected, where, rate)
	if werr := rejects.Close(); werr != nil {
		fmt.Fprintf(stderr, "memgate import: %v\n", werr)
		return 1
	}
	if *wait > 0 && err == nil {
		// Extraction runs after the import, in memgate's workers: the run's totals are
		// what extracting the file's stored memories cost once it ended, or when the
		// wait ran out (the pending ones' finished attempts included).
		x, xerr := client.Extracted(ctx, c, sum.IDs, *workers, *wait, time.Second)
		fmt.Fprintf(stdout, "extraction of %d memories: done %d, failed %d, pending %d, gone %d; "+
			"chat calls %d, prompt tokens %d, completion tokens %d, embedding calls %d, embedding inputs %d, embedding tokens %d, %.3f s\n",
			x.Memories, x.Done, x.Failed, x.Pending, x.Gone, x.Cost.ChatCalls, x.Cost.PromptTokens, x.Cost.CompletionTokens,
			x.Cost.EmbeddingCalls, x.Cost.EmbeddingInputs, x.Cost.EmbeddingTokens, x.Cost.Seconds)
		if xerr != nil {
			fmt.Fprintf(stderr, "memgate import: reading the extraction: %v\n", xerr)
			return 1
		}
	}
	switch {
	case errors.Is(err, client.ErrUnreadable):
		fmt.Fprintf(stderr, "memgate import: %v\n", err)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "memgate import: stopped: %v; run it again to send the rest (what landed is skipped)\n", err)
		return 1
	case sum.Rejected > 0:
		return 3 // done, but not every line was stored
	}
	return 0
}
