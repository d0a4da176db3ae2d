package handlers

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/repository"
)

// Request is one API call as the handlers see it.
type Request struct {
	c    *fiber.Ctx
	s    *API
	bag  *input.Bag
	lang string
	// user is the authenticated caller, nil when anonymous.
	user *repository.User
	// reader is what the request says about who reads (the caller, the
	// password, context=edit, the statuses named): the read decisions are
	// its methods (access.Reader).
	reader access.Reader
	ctx    context.Context
	// termIDs holds the categories and tags a list validator resolved.
	termIDs map[repository.LabelKind][]int64
	// depErr is a store failure a validator met: validation answers it
	// (503) rather than calling the value invalid.
	depErr error
}

// Prepare makes the request a route's handler serves: the caller (nil
// when anonymous), the parameter bag, the response language (prefixLang is
// the address prefix's, "" without one), then the route's parameters
// validated (400 with every problem named).
func (s *API) Prepare(c *fiber.Ctx, b *input.Bag, user *repository.User, prefixLang string, rt *Route) (*Request, error) {
	r := &Request{c: c, s: s, bag: b, ctx: c.UserContext(), user: user}
	if err := r.resolveLanguage(prefixLang); err != nil {
		return nil, err
	}
	if err := r.validate(rt.args); err != nil {
		return nil, err
	}
	r.reader = access.Reader{User: user, Password: b.Str("password"), EditContext: b.Str("context") == "edit", Statuses: namedStatuses(b)}
	return r, nil
}

// resolveLanguage picks the response language: multilang_language wins over
// the address prefix (prefixLang); an unknown language is 400.
func (r *Request) resolveLanguage(prefixLang string) error {
	r.lang = r.s.cfg.DefaultLanguage
	if prefixLang != "" {
		r.lang = prefixLang
	}
	if v, ok := r.bag.Get("multilang_language"); ok {
		l, _ := input.AsString(v)
		l = strings.ToLower(strings.TrimSpace(l))
		if !r.s.cfg.IsLanguage(l) {
			return apierr.InvalidValue("multilang_language", "Must be one of "+strings.Join(r.s.cfg.Languages, ", ")+".", v)
		}
		r.lang = l
	}
	return nil
}
