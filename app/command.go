package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// What every command shares: the table of commands, the dispatch of a
// command group (user, token, webhook) to its subcommands, the --login
// flag, the way errors are printed and the tables commands print.

// commands returns the commands by name. A new command is one line here,
// one line in usage (run.go) and a method on cli in its own file, which
// builds its flags with flagSet and parses them with parseFlags.
func (c *cli) commands() map[string]func(args []string) int {
	return map[string]func([]string) int{
		"serve":       c.serve,
		"user":        c.user,
		"token":       c.token,
		"healthcheck": c.healthcheck,
		"reindex":     c.reindex,
		"status":      c.status,
		"verify":      c.verifyCmd, // cli_verify.go
		"webhook":     c.webhook,
		"source":      c.source, // cli_sources.go
		"meili-key":   c.meiliKey,
		"import":      c.importTEC, // cli_import.go
		"backup":      c.backupCmd, // cli_backup.go
		"restore":     c.restoreCmd,
		"export":      c.exportCmd, // cli_portable.go
		"load":        c.loadCmd,
		"help":        c.help, "-h": c.help, "-help": c.help, "--help": c.help,
		"version": c.version, "-version": c.version, "--version": c.version,
	}
}

// commandGroup is a command made of subcommands ("user add", "user list").
type commandGroup struct {
	// name is the group's command: "user".
	name string
	// usage writes the group's usage (for -h, or without a subcommand).
	usage func(w io.Writer)
	// known lists the subcommands in the unknown-command message.
	known string
	// subcommands run the subcommands by name with the arguments after it.
	subcommands map[string]func(args []string) int
}

// run runs the subcommand args[0] of g. Without one (or with a flag
// first) it writes g's usage: on standard output with status 0 when help
// is asked for, else on standard error with status 2.
func (g commandGroup) run(c *cli, args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelpFlag(args[0]) {
			g.usage(c.stdout)
			return exitOK
		}
		g.usage(c.stderr)
		return exitUsage
	}
	run, ok := g.subcommands[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "%s: unknown command \"%s %s\" (known: %s)\n", programName, g.name, args[0], g.known)
		return exitUsage
	}
	return run(args[1:])
}

// synopsisUsage returns a group usage that is one synopsis line.
func synopsisUsage(synopsis string) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "Usage: %s %s\n", programName, synopsis)
	}
}

// fail prints "cmd: err" and returns the status of a command that ran and
// failed.
func (c *cli) fail(cmd string, err error) int {
	fmt.Fprintf(c.stderr, "%s: %v\n", cmd, err)
	return exitFailure
}

// refused prints a refusal of the calendar's services as the API words
// it: one line "cmd: message" per parameter at fault (data.params, in
// name order), else the error's message. A 400 is a bad command line
// (exitUsage); any other refusal, and any other error, a failure.
func (c *cli) refused(cmd string, err error) int {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		return c.fail(cmd, err)
	}
	if params, ok := ae.Data["params"].(map[string]string); ok && len(params) > 0 {
		for _, name := range slices.Sorted(maps.Keys(params)) {
			fmt.Fprintf(c.stderr, "%s: %s\n", cmd, params[name])
		}
	} else {
		fmt.Fprintf(c.stderr, "%s: %s\n", cmd, ae.Message)
	}
	if ae.Status == 400 {
		return exitUsage
	}
	return exitFailure
}

// misuse prints "cmd: err" and returns the status of a bad command line.
func (c *cli) misuse(cmd string, err error) int {
	fmt.Fprintf(c.stderr, "%s: %v\n", cmd, err)
	return exitUsage
}

// loginFlag is a command's --login flag.
type loginFlag struct{ login *string }

// newLoginFlag registers --login on fs with this description.
func newLoginFlag(fs *flag.FlagSet, usage string) loginFlag {
	return loginFlag{fs.String("login", "", usage)}
}

// value returns the login, trimmed, or the validation error.
func (f loginFlag) value() (string, error) {
	login := strings.TrimSpace(*f.login)
	return login, validateLogin(login)
}

// userByLogin reads the user a command names with --login. A missing
// user is reported as "cmd: no user with login ..." followed by hint.
func (c *accountCommands) userByLogin(ctx context.Context, store repository.Store, cmd, login, hint string) (*repository.User, int) {
	u, err := store.GetUserByLogin(ctx, login)
	if errors.Is(err, repository.ErrNotFound) {
		fmt.Fprintf(c.stderr, "%s: no user with login %q%s\n", cmd, login, hint)
		return nil, exitFailure
	}
	if err != nil {
		return nil, c.fail(cmd, err)
	}
	return u, -1
}

// printTable writes a header and rows as aligned columns (tab-separated
// cells, one row per line).
func printTable(w io.Writer, header string, rows func(w io.Writer)) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	rows(tw)
	tw.Flush()
}
