package wpimport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// wpUser is a user as WordPress's /wp/v2/users shows it in the edit
// context.
type wpUser struct {
	ID       int64    `json:"id"`
	Username string   `json:"username"`
	Email    string   `json:"email"`
	Roles    []string `json:"roles"`
}

// wpRoles maps WordPress's roles to this service's; a user with none of
// them (a subscriber, a shop customer) is not imported.
var wpRoles = map[string]repository.Role{
	"administrator": repository.RoleAdmin,
	"editor":        repository.RoleEditor,
	"author":        repository.RoleAuthor,
	"contributor":   repository.RoleContributor,
}

// linkedHash marks the origin of a user that was here before the import
// and has the login of a source user: the source's posts by that user
// are attributed to it, and the import never changes it.
const linkedHash = "linked"

// userPlan is what the import does with one source user.
type userPlan struct {
	src  wpUser
	role repository.Role
	// local is the user here: an existing one, or the one to create
	// (with the ID chosen for it).
	local  *repository.User
	action action
	linked bool
}

// UserReport is what an import did with the source's users (--users).
type UserReport struct {
	Created, Updated, Unchanged int
	// Linked are the logins of users that were here already: the
	// source's records by them are theirs, and they were not changed
	// (NewlyLinked of them were linked by this run).
	Linked      []string
	NewlyLinked int
	// Skipped are the source's users with no role this service has
	// ("login (role)"): not imported, and their records have no author.
	Skipped []string
}

// fetchUsers reads every user of the source (WordPress's /wp/v2/users in
// the edit context, which an administrator may read).
func (c *client) fetchUsers(ctx context.Context) ([]wpUser, error) {
	if c.wpRoot == nil {
		return nil, errors.New("--users needs WordPress's REST API (wp/v2) beside The Events Calendar's; give --from as https://example.org/wp-json/tribe/events/v1")
	}
	var out []wpUser
	for page := 1; ; page++ {
		if c.caps.Pages > 0 && page > c.caps.Pages {
			return nil, &CapError{Cap: CapPages, Limit: int64(c.caps.Pages), Where: "list wp/v2/users"}
		}
		q := url.Values{}
		q.Set("context", "edit")
		q.Set("per_page", strconv.Itoa(wpPerPage))
		q.Set("page", strconv.Itoa(page))
		q.Set("_fields", "id,username,email,roles")
		res, err := c.get(ctx, c.wpRoot, "/users", q)
		if err != nil {
			return nil, err
		}
		if res.status == http.StatusBadRequest && page > 1 && res.code() == "rest_post_invalid_page_number" {
			break
		}
		if res.status != http.StatusOK {
			return nil, fmt.Errorf("list wp/v2/users page %d: %s (--users needs an administrator's login and application password)", page, c.describe(res))
		}
		var items []wpUser
		if err := json.Unmarshal(res.body, &items); err != nil {
			return nil, fmt.Errorf("list wp/v2/users page %d: %v", page, err)
		}
		for _, u := range items {
			if err := c.hold(heldPerID); err != nil {
				return nil, err
			}
			out = append(out, u)
		}
		pages, _ := strconv.Atoi(res.header.Get("X-WP-TotalPages"))
		if len(items) == 0 || (pages > 0 && page >= pages) {
			break
		}
	}
	return out, nil
}

// userHash is the digest of what an imported user keeps of the source.
func userHash(login, email string, role repository.Role) string {
	sum := sha256.Sum256([]byte(login + "\x00" + email + "\x00" + string(role)))
	return hex.EncodeToString(sum[:16])
}

// planUsers decides, before anything is written, what happens to each
// source user (created, with the source's ID when that is free here, else
// the next free one; updated; left as it is; linked to a user here with
// the same login; skipped for its role) and fills r.authors, the map from
// the source's user IDs to users here, which the records' authors are
// mapped through. Without --users only the users imported earlier from
// this source map authors.
func (r *importRun) planUsers(ctx context.Context, src []wpUser) error {
	here, err := r.store.ListUsers(ctx)
	if err != nil {
		return err
	}
	site := r.rep.Source
	byOrigin, byLogin, taken := map[int64]*repository.User{}, map[string]*repository.User{}, map[int64]bool{}
	next := int64(0)
	for _, u := range here {
		taken[u.ID] = true
		next = max(next, u.ID)
		byLogin[strings.ToLower(u.Login)] = u
		if u.Origin != nil && u.Origin.Site == site {
			byOrigin[u.Origin.ID] = u
			r.authors[u.Origin.ID] = u.ID
		}
	}
	if !r.opts.Users {
		return nil
	}
	for _, s := range src {
		next = max(next, s.ID)
	}
	rep := &UserReport{}
	r.rep.Users = rep
	for _, s := range src {
		role, ok := mappedRole(s.Roles)
		if !ok || s.ID <= 0 || calendar.CheckLogin(s.Username) != "" {
			roles := make([]string, len(s.Roles))
			for i, role := range s.Roles {
				roles[i] = r.c.redact.text(role)
			}
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s (%s)", shown(s.Username), strings.Join(roles, ", ")))
			continue
		}
		p := &userPlan{src: s, role: role}
		hash := userHash(s.Username, s.Email, role)
		switch cur := byOrigin[s.ID]; {
		case cur != nil && cur.Origin.Hash == linkedHash:
			p.local, p.linked = cur, true
			rep.Linked = append(rep.Linked, cur.Login)
		case cur != nil && cur.Origin.Hash == hash:
			p.local = cur
			rep.Unchanged++
		case cur != nil:
			if !strings.EqualFold(cur.Login, s.Username) {
				r.rep.warnf("user %s: renamed %s at the source; logins are kept here", cur.Login, shown(s.Username))
			}
			upd := *cur
			upd.Role, upd.Email = role, s.Email
			upd.Origin = &repository.Origin{Site: site, ID: s.ID, Hash: hash}
			p.local, p.action = &upd, actUpdate
			rep.Updated++
		case byLogin[strings.ToLower(s.Username)] != nil:
			cur := byLogin[strings.ToLower(s.Username)]
			if cur.Origin != nil {
				r.rep.warnf("user %s: the login is taken here by a user imported from %s; the source's records by it have no author", shown(s.Username), cur.Origin.Site)
				continue
			}
			link := *cur
			link.Origin = &repository.Origin{Site: site, ID: s.ID, Hash: linkedHash}
			p.local, p.action, p.linked = &link, actUpdate, true
			rep.Linked = append(rep.Linked, cur.Login)
			rep.NewlyLinked++
		default:
			id := s.ID
			if taken[id] {
				next++
				id = next
			}
			taken[id] = true
			p.local = &repository.User{ID: id, Login: s.Username, Role: role, Email: s.Email, Created: time.Now().UTC(),
				Origin: &repository.Origin{Site: site, ID: s.ID, Hash: hash}}
			p.action = actCreate
			rep.Created++
		}
		r.authors[s.ID] = p.local.ID
		r.users = append(r.users, p)
	}
	slices.Sort(rep.Linked)
	return nil
}

// mappedRole is the most capable of a user's roles this service has.
func mappedRole(roles []string) (repository.Role, bool) {
	best, ok := repository.Role(""), false
	for _, name := range roles {
		role, known := wpRoles[name]
		if known && (!ok || slices.Index(repository.Roles, role) > slices.Index(repository.Roles, best)) {
			best, ok = role, true
		}
	}
	return best, ok
}

// mapAuthors replaces each post's author, the source's user ID as mapped,
// by the user here (0 when the source's user is not here).
func (r *importRun) mapAuthors() {
	for _, kind := range []string{KindVenue, KindOrganizer, KindEvent} {
		for _, rec := range r.recs[kind] {
			if rec.post != nil {
				rec.post.Author = r.authors[rec.post.Author]
			}
		}
	}
}

// writeUsers creates and updates the planned users through the
// calendar's accounts service (as Operator), before any record is
// written: a user that cannot be stored (its ID or login was taken
// meanwhile) stops the run, so that no record names a wrong author.
func (r *importRun) writeUsers(ctx context.Context) error {
	for _, p := range r.users {
		var err error
		u := p.local
		switch p.action {
		case actCreate:
			_, err = r.accounts.CreateUser(ctx, calendar.Operator, &calendar.NewUserInput{
				Login: u.Login, Role: u.Role, Email: u.Email, ID: u.ID, Origin: u.Origin})
		case actUpdate:
			_, err = r.accounts.UpdateUser(ctx, calendar.Operator, u.ID, &calendar.UserInput{Role: &u.Role, Email: &u.Email, Origin: u.Origin})
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("user %s: %w (a user was added here during the import? run it again)", shown(p.src.Username), err)
		}
	}
	return nil
}
