// Command memgate runs the memgate service and its operator commands. This package
// wires the pieces together and holds no logic of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/memgate/memgate/config"
	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
)

// version is set at build time with -ldflags "-X main.version=..."; otherwise the VCS
// revision is used.
var version = ""

const usage = `memgate — long-term memory for AI agents, with access control

Usage:
  memgate serve   [--config FILE]   run the HTTP service
  memgate migrate [--config FILE] [--into-org ORG]
                                    apply the Neo4j schema and exit; with --into-org, then
                                    move everything of the implicit organization into ORG
                                    (run it with every memgate stopped)
  memgate config  [--config FILE] [--get KEY]
                                    print the effective configuration (secrets masked),
                                    or one setting by its dotted key (neo4j.uri)
  memgate version                   print the version
  memgate import [flags] FILE       send a .jsonl or .csv file of memories to a running memgate
  memgate export [flags] --agent ID write an agent's memories and facts as JSON Lines

  memgate loadtest [flags]          write and search from many requesters at once, then read everything back

import, export and loadtest talk to a running memgate: --url (default http://127.0.0.1:8080),
--requester ID, and the host key in MEMGATE_CLIENT_KEY (none in dev mode). import writes
the lines it rejects to FILE.rejects.jsonl and exits 3 when there were any.

Configuration: memgate.yaml (or --config FILE) and MEMGATE_* environment variables.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code: 0 on success, 1 when
// the command failed, 2 for a usage or configuration error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, rest := args[0], args[1:]
	if cmd == "import" || cmd == "export" || cmd == "loadtest" {
		return transfer(cmd, rest, stdout, stderr)
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML configuration file")
	get := fs.String("get", "", "config only: print the one setting of this dotted key (neo4j.uri)")
	intoOrg := fs.String("into-org", "", "migrate only: move the implicit organization's data into this organization")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memgate %s: unexpected arguments %v\n", cmd, fs.Args())
		return 2
	}
	if *get != "" && cmd != "config" {
		fmt.Fprintf(stderr, "memgate %s: --get is for memgate config\n", cmd)
		return 2
	}
	if *intoOrg != "" && cmd != "migrate" {
		fmt.Fprintf(stderr, "memgate %s: --into-org is for memgate migrate\n", cmd)
		return 2
	}
	if err := graph.CheckOrg("--into-org", *intoOrg); *intoOrg != "" && err != nil {
		fmt.Fprintf(stderr, "memgate migrate: %v\n", err)
		return 2
	}

	if cmd == "version" {
		fmt.Fprintf(stdout, "memgate %s (schema %d)\n", buildVersion(), cypher.SchemaVersion())
		return 0
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "memgate: %v\n", err)
		return 2
	}
	log := newLogger(cfg.Log, stderr)

	switch cmd {
	case "config":
		if *get != "" {
			value, err := cfg.Get(*get)
			if err != nil {
				fmt.Fprintf(stderr, "memgate config: %v\n", err)
				return 2
			}
			fmt.Fprintln(stdout, value)
			return 0
		}
		out, err := cfg.Redacted().YAML()
		if err != nil {
			fmt.Fprintf(stderr, "memgate: %v\n", err)
			return 1
		}
		_, _ = stdout.Write(out)
		return 0
	case "migrate":
		return exitCode(log, migrate(cfg, log, graph.Org(*intoOrg)))
	case "serve":
		return exitCode(log, serve(cfg, log))
	default:
		fmt.Fprintf(stderr, "memgate: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

func exitCode(log *slog.Logger, err error) int {
	if err != nil {
		log.Error("memgate failed", "error", err.Error())
		return 1
	}
	return 0
}

func serve(cfg *config.Config, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	m := NewMain(cfg, log)
	if err := m.Open(ctx); err != nil {
		return err
	}
	var fatal error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", "signal")
	case fatal = <-m.Fatal():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	return errors.Join(fatal, m.Close(shutdownCtx))
}

// migrate applies the schema and, when into is a named organization, moves the
// implicit organization's data into it (MoveIntoOrg), which takes as long as the
// database is large: only the schema has a time limit.
func migrate(cfg *config.Config, log *slog.Logger, into graph.Org) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	db, err := openDB(cfg, log, nil)
	if err != nil {
		return err
	}
	schemaCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = db.Migrate(schemaCtx, cfg.Embedder.Dimensions)
	if err == nil && into != graph.DefaultOrg {
		var moved neo4jstore.OrgMove
		moved, err = db.MoveIntoOrg(ctx, into)
		if err == nil {
			log.Info("moved the implicit organization", "org", string(into), "agents", moved.Agents, "teams", moved.Teams,
				"requesters", moved.Principals, "nodes", moved.Nodes, "relationships", moved.Relationships)
		}
	}
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelClose()
	return errors.Join(err, db.Close(closeCtx))
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}
