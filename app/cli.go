package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// accountCommands runs the account commands: "user" and "token".
type accountCommands struct{ *cli }

// user runs "user SUBCOMMAND".
func (c *accountCommands) user(args []string) int {
	set := func(verb string) func([]string) int {
		return func(args []string) int { return c.userSet(verb, args) }
	}
	return commandGroup{
		name:  "user",
		usage: synopsisUsage("user add|list|role|disable|enable ..."),
		known: "user add, list, role, disable, enable",
		subcommands: map[string]func([]string) int{
			"add": c.userAdd, "list": c.userList, "role": set("role"), "disable": set("disable"), "enable": set("enable"),
		},
	}.run(c.cli, args)
}

// token runs "token SUBCOMMAND".
func (c *accountCommands) token(args []string) int {
	return commandGroup{
		name:        "token",
		usage:       synopsisUsage("token create|list|revoke ..."),
		known:       "token create, list, revoke",
		subcommands: map[string]func([]string) int{"create": c.tokenCreate, "list": c.tokenList, "revoke": c.tokenRevoke},
	}.run(c.cli, args)
}

func isHelpFlag(s string) bool {
	return s == "-h" || s == "-help" || s == "--help"
}

// validateLogin checks a login given on the command line: the
// accounts service's rules (calendar.CheckLogin), and no white space,
// which the command line refuses besides (a login with spaces comes only
// from an import of WordPress's users).
func validateLogin(login string) error {
	if login == "" {
		return errors.New("--login is required")
	}
	if msg := calendar.CheckLogin(login); msg != "" {
		return errors.New("--login " + lowerFirst(msg))
	}
	if strings.IndexFunc(login, unicode.IsSpace) >= 0 {
		return errors.New("--login must not contain spaces")
	}
	return nil
}

// lowerFirst is s with its first letter in lower case ("Must be" ->
// "must be").
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// withStore loads the configuration, opens the store, calls fn and closes
// the store. SIGINT/SIGTERM cancel fn's context. It names the store on
// stderr and refuses a missing embedded store (cli_accounts.go).
func (c *cli) withStore(fn func(ctx context.Context, store repository.Store) int) int {
	return c.withStoreInit(false, "user add --init", fn)
}

// withStoreInit is withStore that may create a new embedded store (init);
// initCommand is the command line that would create a missing one, named
// in the refusal.
func (c *cli) withStoreInit(init bool, initCommand string, fn func(ctx context.Context, store repository.Store) int) int {
	return c.withConfigStoreInit(init, initCommand, func(ctx context.Context, _ *config.Config, store repository.Store) int {
		return fn(ctx, store)
	})
}

// withConfigStore is withStore for a command that needs the configuration
// too: fn gets the one loaded.
func (c *cli) withConfigStore(fn func(ctx context.Context, cfg *config.Config, store repository.Store) int) int {
	return c.withConfigStoreInit(false, "user add --init", fn)
}

// withConfigStoreInit is withStoreInit for a command that needs the
// configuration too.
func (c *cli) withConfigStoreInit(init bool, initCommand string, fn func(ctx context.Context, cfg *config.Config, store repository.Store) int) int {
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	if err := c.checkStoreExists(cfg, init, initCommand); err != nil {
		return exitFailure
	}
	fmt.Fprintf(c.stderr, "Store: %s\n", storeDescription(cfg))
	return c.withConfiguredStore(cfg, func(ctx context.Context, store repository.Store) int { return fn(ctx, cfg, store) })
}

// withConfiguredStore opens the store cfg names, runs fn with it and
// closes it; the status is fn's, or exitFailure when the store cannot be
// opened or closed.
func (c *cli) withConfiguredStore(cfg *config.Config, fn func(ctx context.Context, store repository.Store) int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, err := openStore(ctx, cfg)
	if err != nil {
		return c.fail(programName, err)
	}
	code := fn(ctx, store)
	if err := closeStore(store); err != nil {
		fmt.Fprintf(c.stderr, "%s: close store: %v\n", programName, err)
		if code == exitOK {
			code = exitFailure
		}
	}
	return code
}

// userAdd runs "user add --login NAME --role ROLE": it creates the user and
// prints its ID on stdout.
func (c *accountCommands) userAdd(args []string) int {
	fs := c.flagSet("user add", "user add --login NAME --role ROLE [--init]")
	loginFlag := newLoginFlag(fs, "login of the new user (required)")
	roleName := fs.String("role", "", "role: "+roleList()+" (required)")
	initStore := fs.Bool("init", false, "create the embedded store (DATA_DIR) when it does not exist yet")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	login, err := loginFlag.value()
	if err != nil {
		return c.misuse("user add", err)
	}
	role, err := parseRole(*roleName)
	if err != nil {
		return c.refused("user add", err)
	}
	return c.withStoreInit(*initStore, "user add --init", func(ctx context.Context, store repository.Store) int {
		u, err := calendar.NewAccounts(calendar.AccountsDeps{Store: store}).CreateUser(ctx, calendar.Operator, &calendar.NewUserInput{Login: login, Role: role})
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code == "existing_user_login" {
			return c.fail("user add", fmt.Errorf("login %q is already taken", login))
		}
		if err != nil {
			return c.refused("user add", err)
		}
		fmt.Fprintf(c.stderr, "Created %s %q with ID %d.\n", u.Role, u.Login, u.ID)
		fmt.Fprintln(c.stdout, u.ID)
		return exitOK
	})
}

// parseRole returns the role --role names, case and surrounding spaces
// aside (a name typed on a command line), or the accounts service's
// refusal of it, in the API's words.
func parseRole(name string) (repository.Role, error) {
	if role, ok := repository.ParseRole(name); ok {
		return role, nil
	}
	return "", calendar.CheckRole(repository.Role(name))
}

// tokenCreate runs "token create --login NAME": it creates an API token for
// the user and prints the secret, alone, on stdout. Only its hash is stored.
func (c *accountCommands) tokenCreate(args []string) int {
	fs := c.flagSet("token create", "token create --login NAME [--name TEXT] [--expires 30d]")
	loginFlag := newLoginFlag(fs, "login of the user the token authenticates (required)")
	name := fs.String("name", "", "what the token is for, shown by 'token list'")
	expires := fs.String("expires", "", "lifetime (e.g. 720h or 30d); absent: no expiry")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	lifetime, err := parseExpiry(*expires)
	if err != nil {
		return c.misuse("token create", err)
	}
	if len(*name) > calendar.MaxTokenName {
		return c.misuse("token create", fmt.Errorf("--name must be at most %d bytes", calendar.MaxTokenName))
	}
	login, err := loginFlag.value()
	if err != nil {
		return c.misuse("token create", err)
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		u, code := c.userByLogin(ctx, store, "token create", login, fmt.Sprintf(" (create one with '%s user add')", programName))
		if u == nil {
			return code
		}
		in := &calendar.TokenInput{User: u.ID, Name: name}
		if lifetime > 0 {
			in.Lifetime = &lifetime
		}
		t, secret, err := calendar.NewAccounts(calendar.AccountsDeps{Store: store}).CreateToken(ctx, calendar.Operator, in)
		if err != nil {
			return c.refused("token create", err)
		}
		fmt.Fprintf(c.stderr, "Created token %s for %s %q (user ID %d). It is shown only this once: "+
			"send it as \"Authorization: Bearer <token>\".\n", t.ID(), u.Role, u.Login, u.ID)
		fmt.Fprintln(c.stdout, secret)
		return exitOK
	})
}

// healthcheck runs "healthcheck [--url URL] [--timeout D]": it GETs the
// service's /healthz and exits 0 on 200, else 1. It exists because the
// distroless image has no shell or curl for a container HEALTHCHECK. It
// never exits 2, which Docker reserves.
func (c *opsCommands) healthcheck(args []string) int {
	fs := c.flagSet("healthcheck", "healthcheck [--url URL] [--timeout DURATION]")
	rawURL := fs.String("url", "", "URL to probe (default: /healthz on the port of LISTEN_ADDR, via loopback)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if code := c.parseFlags(fs, args); code != -1 {
		if code == exitOK {
			return exitOK
		}
		return exitFailure
	}
	target := *rawURL
	if target == "" {
		cfg := c.loadConfig()
		if cfg == nil {
			return exitFailure
		}
		var err error
		if target, err = healthURL(cfg); err != nil {
			return c.fail("healthcheck", err)
		}
	}
	if err := probe(target, *timeout, c.stdout); err != nil {
		return c.fail("healthcheck", err)
	}
	return exitOK
}

// healthURL returns the /healthz URL of a service listening on
// cfg.ListenAddr on this machine: a wildcard host becomes 127.0.0.1.
func healthURL(cfg *config.Config) (string, error) {
	host, port, err := net.SplitHostPort(cfg.ListenAddr)
	if err != nil {
		return "", fmt.Errorf("LISTEN_ADDR: %w", err)
	}
	if port == "0" {
		return "", errors.New("LISTEN_ADDR has port 0 (random); pass --url")
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// probe GETs target and returns nil when it answers 200 OK. It writes the
// status line to out, with the instance that answered when the body names
// one (/healthz does), so that an answer from another process on the port
// shows.
func probe(target string, timeout time.Duration, out io.Writer) error {
	client := &http.Client{Timeout: timeout}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", config.UserAgent("cli"))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", target, resp.Status)
	}
	var id struct {
		Instance, Version, Revision string
		PID                         int
	}
	if json.Unmarshal(body, &id) == nil && id.Instance != "" {
		fmt.Fprintf(out, "%s: %s (instance %s, pid %d, version %s, revision %s)\n", target, resp.Status, id.Instance, id.PID, id.Version, id.Revision)
		return nil
	}
	fmt.Fprintf(out, "%s: %s\n", target, resp.Status)
	return nil
}
