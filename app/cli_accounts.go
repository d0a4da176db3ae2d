package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// The account commands beyond "user add" and "token create" (issue 7,
// finding 9), and the store checks every administration command makes:
// it says which store it opened, and it never creates an empty embedded
// store by accident (only "user add --init" may).

// storeDescription names the store cfg opens, for the administration
// commands' first line: the SQLite file's absolute path, or the MongoDB
// hosts and database without credentials or options.
func storeDescription(cfg *config.Config) string {
	if cfg.Embedded() {
		return "SQLite " + embeddedStorePath(cfg)
	}
	return "MongoDB " + redactMongoURI(cfg.MongoURI) + " database " + cfg.MongoDatabase
}

// embeddedStorePath is the absolute path of the SQLite file.
func embeddedStorePath(cfg *config.Config) string {
	p := filepath.Join(cfg.DataDir, "calendar.db")
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// redactMongoURI keeps a connection string's scheme, hosts and path: user
// information and the query (which may hold a key-file password) are
// dropped. It avoids net/url, which rejects seed lists ("h1:27017,h2").
func redactMongoURI(uri string) string {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return "(unparsable URI)"
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		hosts = hosts[i+1:]
	}
	path, _, _ = strings.Cut(path, "?")
	if path != "" {
		return scheme + "://" + hosts + "/" + path
	}
	return scheme + "://" + hosts
}

// errNoStore is returned when an administration command would create an
// empty embedded store.
var errNoStore = errors.New("no store")

// checkStoreExists refuses a missing embedded store unless init is set: a
// command run from the wrong directory would otherwise create ./data and
// write users and tokens the running service never sees. initCommand is
// the command line that creates one ("user add --init", "import --init").
func (c *cli) checkStoreExists(cfg *config.Config, init bool, initCommand string) error {
	if !cfg.Embedded() || init {
		return nil
	}
	p := embeddedStorePath(cfg)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(c.stderr, "%s: there is no store at %s (DATA_DIR=%q). Run the command with the service's DATA_DIR (or MONGO_URI); "+
			"to create a new store, run '%s'.\n", programName, p, cfg.DataDir, initCommand)
		return errNoStore
	}
	return nil
}

// userList runs "user list": one line per user.
func (c *accountCommands) userList(args []string) int {
	return listCommand(c.cli, "user list", args, "ID\tLOGIN\tROLE\tSTATE\tCREATED", repository.Store.ListUsers, func(u *repository.User) string {
		state := "active"
		if u.Disabled {
			state = "disabled"
		}
		return fmt.Sprintf("%d\t%s\t%s\t%s\t%s", u.ID, u.Login, u.Role, state, u.Created.UTC().Format(time.RFC3339))
	})
}

// userSet runs "user role|disable|enable --login NAME [--role ROLE]".
func (c *accountCommands) userSet(verb string, args []string) int {
	synopsis := "user " + verb + " --login NAME"
	if verb == "role" {
		synopsis += " --role ROLE"
	}
	cmd := "user " + verb
	fs := c.flagSet(cmd, synopsis)
	loginFlag := newLoginFlag(fs, "login of the user (required)")
	roleName := ""
	if verb == "role" {
		fs.StringVar(&roleName, "role", "", "new role: "+roleList()+" (required)")
	}
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	login, err := loginFlag.value()
	if err != nil {
		return c.misuse(cmd, err)
	}
	role, roleErr := parseRole(roleName)
	if verb == "role" && roleErr != nil {
		return c.refused(cmd, roleErr)
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		u, code := c.userByLogin(ctx, store, cmd, login, "")
		if u == nil {
			return code
		}
		in := &calendar.UserInput{}
		switch verb {
		case "role":
			in.Role = &role
		case "disable", "enable":
			disabled := verb == "disable"
			in.Disabled = &disabled
		}
		u, err := calendar.NewAccounts(calendar.AccountsDeps{Store: store}).UpdateUser(ctx, calendar.Operator, u.ID, in)
		if err != nil {
			return c.refused(cmd, err)
		}
		state := "active"
		if u.Disabled {
			state = "disabled (its tokens are refused)"
		}
		fmt.Fprintf(c.stderr, "User %q (ID %d) is now %s, %s.\n", u.Login, u.ID, u.Role, state)
		return exitOK
	})
}

// tokenList runs "token list [--login NAME]": one line per token, never
// the secret or the hash.
func (c *accountCommands) tokenList(args []string) int {
	fs := c.flagSet("token list", "token list [--login NAME]")
	login := fs.String("login", "", "only the tokens of this user")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		var userID int64
		if *login != "" {
			u, err := store.GetUserByLogin(ctx, strings.TrimSpace(*login))
			if err != nil {
				fmt.Fprintf(c.stderr, "token list: no user with login %q\n", *login)
				return exitFailure
			}
			userID = u.ID
		}
		tokens, err := store.ListTokens(ctx, userID)
		if err != nil {
			return c.fail("token list", err)
		}
		users, err := store.ListUsers(ctx)
		if err != nil {
			return c.fail("token list", err)
		}
		logins := map[int64]string{}
		for _, u := range users {
			logins[u.ID] = u.Login
		}
		orNever := func(t time.Time, never string) string {
			if t.IsZero() {
				return never
			}
			return t.UTC().Format(time.RFC3339)
		}
		printTable(c.stdout, "ID\tUSER\tNAME\tCREATED\tLAST USED\tEXPIRES", func(w io.Writer) {
			for _, t := range tokens {
				name := t.Name
				if name == "" {
					name = "-"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID(), logins[t.UserID], name,
					t.Created.UTC().Format(time.RFC3339), orNever(t.LastUsed, "never"), orNever(t.Expires, "never"))
			}
		})
		return exitOK
	})
}

// tokenRevoke runs "token revoke ID": the token stops working at once for
// every process serving the store.
func (c *accountCommands) tokenRevoke(args []string) int {
	fs := c.flagSet("token revoke", "token revoke ID")
	ids, code := c.parseArgs(fs, args, 1)
	if code >= 0 {
		return code
	}
	if len(ids) != 1 {
		fmt.Fprintf(c.stderr, "token revoke: give one token ID (see 'token list')\n")
		return exitUsage
	}
	id := strings.ToLower(strings.TrimSpace(ids[0]))
	if !repository.ValidTokenID(id) {
		fmt.Fprintf(c.stderr, "token revoke: %q is not a token ID (%d hex digits, see 'token list')\n", ids[0], repository.TokenIDLength)
		return exitUsage
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		_, err := calendar.NewAccounts(calendar.AccountsDeps{Store: store}).RevokeToken(ctx, calendar.Operator, id)
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == 404 {
			fmt.Fprintf(c.stderr, "token revoke: no token has ID %s\n", id)
			return exitFailure
		}
		if err != nil {
			return c.refused("token revoke", err)
		}
		fmt.Fprintf(c.stderr, "Revoked token %s.\n", id)
		return exitOK
	})
}

// parseExpiry reads --expires: a Go duration ("720h") or a number of days
// ("30d"), from one minute to ten years; "" means no expiry.
func parseExpiry(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("--expires %q: not a number of days", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("--expires %q: use a duration such as 720h or 30d", s)
		}
	}
	if d < calendar.MinTokenLifetime || d > calendar.MaxTokenLifetime {
		return 0, fmt.Errorf("--expires %q: must be from 1m to 3650d", s)
	}
	return d, nil
}
