package cli

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

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// maxLoginLength is WordPress's limit on user_login.
const maxLoginLength = 60

// user runs "user SUBCOMMAND".
func (c *cli) user(args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelpFlag(args[0]) {
			fmt.Fprintf(c.stdout, "Usage: %s user add|list|role|disable|enable ...\n", programName)
			return exitOK
		}
		fmt.Fprintf(c.stderr, "Usage: %s user add|list|role|disable|enable ...\n", programName)
		return exitUsage
	}
	switch args[0] {
	case "add":
		return c.userAdd(args[1:])
	case "list":
		return c.userList(args[1:])
	case "role", "disable", "enable":
		return c.userSet(args[0], args[1:])
	default:
		fmt.Fprintf(c.stderr, "%s: unknown command \"user %s\" (known: user add, list, role, disable, enable)\n", programName, args[0])
		return exitUsage
	}
}

// token runs "token SUBCOMMAND".
func (c *cli) token(args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelpFlag(args[0]) {
			fmt.Fprintf(c.stdout, "Usage: %s token create|list|revoke ...\n", programName)
			return exitOK
		}
		fmt.Fprintf(c.stderr, "Usage: %s token create|list|revoke ...\n", programName)
		return exitUsage
	}
	switch args[0] {
	case "create":
		return c.tokenCreate(args[1:])
	case "list":
		return c.tokenList(args[1:])
	case "revoke":
		return c.tokenRevoke(args[1:])
	default:
		fmt.Fprintf(c.stderr, "%s: unknown command \"token %s\" (known: token create, list, revoke)\n", programName, args[0])
		return exitUsage
	}
}

func isHelpFlag(s string) bool {
	return s == "-h" || s == "-help" || s == "--help"
}

// validateLogin checks a login given on the command line.
func validateLogin(login string) error {
	switch {
	case login == "":
		return errors.New("--login is required")
	case len(login) > maxLoginLength:
		return fmt.Errorf("--login must be at most %d bytes", maxLoginLength)
	case strings.IndexFunc(login, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return errors.New("--login must not contain spaces or control characters")
	}
	return nil
}

// withStore loads the configuration, opens the store, calls fn and closes
// the store. SIGINT/SIGTERM cancel fn's context. It names the store on
// stderr and refuses a missing embedded store (cli_accounts.go).
func (c *cli) withStore(fn func(ctx context.Context, store repository.Store) int) int {
	return c.withStoreInit(false, fn)
}

// withStoreInit is withStore that may create a new embedded store (init).
func (c *cli) withStoreInit(init bool, fn func(ctx context.Context, store repository.Store) int) int {
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	if err := c.checkStoreExists(cfg, init); err != nil {
		return exitFailure
	}
	fmt.Fprintf(c.stderr, "Store: %s\n", storeDescription(cfg))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, err := openStore(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", programName, err)
		return exitFailure
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
func (c *cli) userAdd(args []string) int {
	fs := c.flagSet("user add", "user add --login NAME --role ROLE [--init]")
	login := fs.String("login", "", "login of the new user (required)")
	roleName := fs.String("role", "", "role: "+roleList()+" (required)")
	initStore := fs.Bool("init", false, "create the embedded store (DATA_DIR) when it does not exist yet")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	*login = strings.TrimSpace(*login)
	if err := validateLogin(*login); err != nil {
		fmt.Fprintf(c.stderr, "user add: %v\n", err)
		return exitUsage
	}
	role, ok := repository.ParseRole(*roleName)
	if !ok {
		fmt.Fprintf(c.stderr, "user add: --role must be one of %s, not %q\n", roleList(), *roleName)
		return exitUsage
	}
	return c.withStoreInit(*initStore, func(ctx context.Context, store repository.Store) int {
		u := &repository.User{Login: *login, Role: role, Created: time.Now().UTC()}
		if err := store.CreateUser(ctx, u); err != nil {
			if errors.Is(err, repository.ErrDuplicate) {
				fmt.Fprintf(c.stderr, "user add: login %q is already taken\n", *login)
			} else {
				fmt.Fprintf(c.stderr, "user add: %v\n", err)
			}
			return exitFailure
		}
		fmt.Fprintf(c.stderr, "Created %s %q with ID %d.\n", u.Role, u.Login, u.ID)
		fmt.Fprintln(c.stdout, u.ID)
		return exitOK
	})
}

// tokenCreate runs "token create --login NAME": it creates an API token for
// the user and prints the secret, alone, on stdout. Only its hash is stored.
func (c *cli) tokenCreate(args []string) int {
	fs := c.flagSet("token create", "token create --login NAME [--name TEXT] [--expires 30d]")
	login := fs.String("login", "", "login of the user the token authenticates (required)")
	name := fs.String("name", "", "what the token is for, shown by 'token list'")
	expires := fs.String("expires", "", "lifetime (e.g. 720h or 30d); absent: no expiry")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	lifetime, err := parseExpiry(*expires)
	if err != nil {
		fmt.Fprintf(c.stderr, "token create: %v\n", err)
		return exitUsage
	}
	if len(*name) > 100 {
		fmt.Fprintf(c.stderr, "token create: --name must be at most 100 bytes\n")
		return exitUsage
	}
	*login = strings.TrimSpace(*login)
	if err := validateLogin(*login); err != nil {
		fmt.Fprintf(c.stderr, "token create: %v\n", err)
		return exitUsage
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		u, err := store.GetUserByLogin(ctx, *login)
		if errors.Is(err, repository.ErrNotFound) {
			fmt.Fprintf(c.stderr, "token create: no user with login %q (create one with '%s user add')\n", *login, programName)
			return exitFailure
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "token create: %v\n", err)
			return exitFailure
		}
		secret, err := repository.NewTokenSecret()
		if err != nil {
			fmt.Fprintf(c.stderr, "token create: %v\n", err)
			return exitFailure
		}
		now := time.Now().UTC().Truncate(time.Second)
		t := &repository.Token{Hash: repository.HashToken(secret), UserID: u.ID, Created: now, Name: strings.TrimSpace(*name)}
		if lifetime > 0 {
			t.Expires = now.Add(lifetime)
		}
		if err := store.CreateToken(ctx, t); err != nil {
			fmt.Fprintf(c.stderr, "token create: %v\n", err)
			return exitFailure
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
func (c *cli) healthcheck(args []string) int {
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
			fmt.Fprintf(c.stderr, "healthcheck: %v\n", err)
			return exitFailure
		}
	}
	if err := probe(target, *timeout, c.stdout); err != nil {
		fmt.Fprintf(c.stderr, "healthcheck: %v\n", err)
		return exitFailure
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
	resp, err := client.Get(target)
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
