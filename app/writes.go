package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// postWriteArgs declares the parameters of a create (required fields
// enforced) or an update (everything optional) of one post type.
func (s *Server) postWriteArgs(pt *postType, create bool) []arg {
	text := func(name, desc string) arg {
		return arg{Name: name, Type: tString, Check: emptyOrString, Desc: desc, MaxLen: limits.MaxShortText, Text: plainText}
	}
	contact := func(a arg, check func(*request, any) string) arg {
		a.Check = check
		return a
	}
	common := []arg{
		{Name: "author", Type: tInteger, Desc: "ID of an existing user; editors and admins may name another user."},
		{Name: "date", Type: tString, Check: isTime, Format: "date-time", Desc: "Publication date, in the item's (or the site's) time zone."},
		{Name: "date_utc", Type: tString, Check: isTime, Format: "date-time", Desc: "Publication date in UTC."},
		{Name: "description", Type: tString, Check: emptyOrString, Desc: "Description (HTML allowed); an empty value clears it.", MaxLen: limits.MaxDescription, Text: richText},
		{Name: "excerpt", Type: tString, Check: emptyOrString, Desc: "Excerpt; an empty value clears it.", MaxLen: limits.MaxExcerpt, Text: richText},
		{Name: "slug", Type: tString, Check: emptyOrString, Desc: "Slug in the request language; generated from the name when absent.", MaxLen: limits.MaxSlug},
		{Name: "status", Type: tString, Enum: []string{"publish", "future", "draft", "pending", "private"}, Desc: "Post status; contributors' publish and future become pending."},
		{Name: "image", Type: tAny, Check: checkImageArg, Desc: "Featured image: the ID of a registered image or an http(s) URL; empty removes it.", MaxLen: limits.MaxURL},
	}
	var own []arg
	switch pt.kind {
	case repository.KindEvent:
		own = []arg{
			{Name: "title", Type: tString, Required: create, Check: nonEmptyString, Desc: "Event title.", MaxLen: limits.MaxTitle, Text: plainText},
			{Name: "start_date", Type: tString, Required: create, Check: isTime, Format: "date-time", Desc: "Start, as wall-clock time in the event time zone, a Unix timestamp or a relative phrase."},
			{Name: "end_date", Type: tString, Required: create, Check: isTime, Format: "date-time", Desc: "End, read like start_date; not before the start."},
			{Name: "timezone", Type: tString, Check: checkZone, Desc: "Event time zone: an IANA name or UTC±N; empty means the site zone.", MaxLen: limits.MaxShortText},
			{Name: "all_day", Type: tBoolean, Desc: "All-day event: start at 00:00:00, end at 23:59:59."},
			{Name: "cost", Type: tAny, Check: checkCost, Desc: "Cost as text, or a list of prices.", MaxLen: limits.MaxShortText, MaxItems: limits.MaxCostItems, Text: plainText},
			{Name: "website", Type: tString, Check: checkWebsite, Format: "uri", Desc: "Event web page (http or https).", MaxLen: limits.MaxURL},
			{Name: "show_map", Type: tBoolean, Desc: "Show a map."},
			{Name: "show_map_link", Type: tBoolean, Desc: "Show a map link."},
			{Name: "hide_from_listings", Type: tBoolean, Desc: "Hide from event lists (still readable by ID)."},
			{Name: "sticky", Type: tBoolean, Desc: "Sticky in calendar views."},
			{Name: "featured", Type: tBoolean, Desc: "Featured event."},
			{Name: "ticketed", Type: tBoolean, Desc: "The event sells tickets."},
			{Name: "categories", Type: tArray, Items: tAny, Desc: "Category IDs, slugs or names (unknown names are created); empty clears.", MaxLen: limits.MaxTermName, MaxItems: limits.MaxTermsPerField, Text: plainText},
			{Name: "tags", Type: tArray, Items: tAny, Desc: "Tag IDs, slugs or names (unknown names are created); empty clears.", MaxLen: limits.MaxTermName, MaxItems: limits.MaxTermsPerField, Text: plainText},
			{Name: "venue", Type: tAny, Desc: "Venue: an ID, a list or CSV of IDs, {id} objects or inline venue data; empty unlinks.", MaxItems: limits.MaxLinksPerEvent},
			{Name: "organizer", Type: tAny, Desc: "Organizers: IDs, a CSV of IDs, {id} objects or inline organizer data; empty unlinks.", MaxItems: limits.MaxLinksPerEvent},
			{Name: "password", Type: tString, Check: emptyOrString, Desc: "Password protecting the event; empty removes it.", MaxLen: limits.MaxPassword},
			recurrenceArg(),
		}
	case repository.KindVenue:
		own = []arg{
			{Name: "venue", Type: tString, Required: create, Check: nonEmptyString, Desc: "Venue name.", MaxLen: limits.MaxTitle, Text: plainText},
			text("address", "Street address."), text("city", "City."), text("country", "Country."),
			text("province", "Province."), text("state", "State."), text("stateprovince", "State or province; derived from state or province when absent."),
			text("zip", "Postal code."), contact(text("phone", "Phone number: any text without line breaks or control characters."), checkPhone),
			{Name: "website", Type: tString, Check: checkWebsite, Format: "uri", Desc: "Venue web page (http or https).", MaxLen: limits.MaxURL},
			{Name: "show_map", Type: tAny, Desc: "Events at the venue show a map (default true)."},
			{Name: "show_map_link", Type: tAny, Desc: "Events at the venue show a map link (default true)."},
			{Name: "geo_lat", Type: tAny, Check: checkLatLng(90), Desc: "Latitude, -90 to 90; empty clears."},
			{Name: "geo_lng", Type: tAny, Check: checkLatLng(180), Desc: "Longitude, -180 to 180; empty clears."},
		}
	case repository.KindOrganizer:
		own = []arg{
			{Name: "organizer", Type: tString, Required: create, Check: nonEmptyString, Desc: "Organizer name.", MaxLen: limits.MaxTitle, Text: plainText},
			contact(text("phone", "Phone number: any text without line breaks or control characters."), checkPhone),
			contact(text("email", "E-mail address: one plain address such as name@example.org."), checkEmail),
			{Name: "website", Type: tString, Check: checkWebsite, Format: "uri", Desc: "Organizer web page (http or https).", MaxLen: limits.MaxURL},
		}
	}
	return append(own, common...)
}

// checkImageArg accepts an empty value, a positive ID or an http(s) URL of
// an image (the file itself is never fetched).
func checkImageArg(_ *request, v any) string {
	if isEmptyValue(v) {
		return ""
	}
	if n, ok := asInt(v); ok && n > 0 {
		return ""
	}
	const msg = "Must be the ID of a registered image, an http or https URL of an image file (.jpg, .png, ...), or empty to remove it."
	s, ok := v.(string)
	if !ok || !validURL(s) {
		return msg
	}
	if _, ok := imageURLExtension(s); !ok {
		return "The image must be an image file: " + strings.TrimPrefix(msg, "Must be ")
	}
	return ""
}

// checkZone accepts "", an IANA zone name or UTC±N.
func checkZone(_ *request, v any) string {
	s, _ := asString(v)
	if s == "" {
		return ""
	}
	if _, ok := loadZone(s); !ok {
		return "Must be an IANA time zone name (Europe/Amsterdam), UTC, or an offset such as UTC+2 or UTC-5:30; empty means the site's zone."
	}
	return ""
}

// checkCost accepts a scalar or a list of scalars.
func checkCost(_ *request, v any) string {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if _, ok := asString(e); !ok {
				return "Must be text or a list of prices (numbers or text), not nested lists or objects."
			}
		}
		return ""
	}
	if _, ok := asString(v); !ok {
		return "Must be text or a list of prices (numbers or text), not an object."
	}
	return ""
}

// checkLatLng accepts an empty value or a number within ±limit.
func checkLatLng(limit float64) func(*request, any) string {
	return func(_ *request, v any) string {
		if s, ok := v.(string); ok && s == "" {
			return ""
		}
		if v == nil {
			return ""
		}
		f, ok := asFloat(v)
		if !ok || math.Abs(f) > limit {
			return fmt.Sprintf("Must be a number from %v to %v.", -limit, limit)
		}
		return ""
	}
}

// linkForms is the message for an item of a venue or organizer value that
// is not an ID: what the parameter accepts, and that a slug or a name is
// not an ID.
func linkForms(kind repository.PostKind, item any) string {
	shown := "an object or a list"
	if sv, ok := asString(item); ok {
		shown = strconv.Quote(sv)
	}
	return fmt.Sprintf(`Must be %[1]s IDs (whole numbers of 1 or more; a list, or comma-separated), {"id": ...} objects or %[1]s data objects, or empty to unlink; %[2]s is not an ID (an ID, not a slug or a name).`, kind, shown)
}

// linkRef is one item of a venue or organizer value: an existing ID or
// inline data to create (or reuse) an item from.
type linkRef struct {
	id   int64
	data *bag
}

// writePlan is a validated write: what prepareWrite checked and resolved,
// then commit creates linked items, then apply changes the post.
type writePlan struct {
	pt  *postType
	b   *bag
	cur *repository.Post // nil on create

	venues, organizers       []linkRef
	setVenues, setOrganizers bool
	categories, tags         []any
	setCategories, setTags   bool
	catRefs, tagRefs         []termRef
	imageURL                 string
	imageID                  int64
	setImage                 bool
	author                   int64
	setAuthor                bool
	// resolved by commit
	venueIDs, organizerIDs, categoryIDs, tagIDs []int64
}

// prepareWrite checks what the declared validators cannot (links to other
// items, authors, image rights) without writing anything.
func (r *request) prepareWrite(pt *postType, b *bag, cur *repository.Post) (*writePlan, error) {
	plan := &writePlan{pt: pt, b: b, cur: cur}
	var errs paramErrors
	if v, ok := b.get("author"); ok {
		id, _ := asInt(v)
		u, err := r.s.store.GetUser(r.ctx, id)
		switch {
		case errors.Is(err, repository.ErrNotFound):
			errs.invalidValue("author", fmt.Sprintf("There is no user with ID %d.", id), v)
		case err != nil:
			return nil, err
		case u.ID != r.user.ID && !canEditOthers(r.user):
			return nil, newError(403, "rest_cannot_edit_others", "Sorry, you are not allowed to write items as this user.")
		default:
			plan.author, plan.setAuthor = id, true
		}
	}
	if v, ok := b.get("image"); ok {
		plan.setImage = true
		switch {
		case isEmptyValue(v):
		case isIntLike(v):
			id, _ := asInt(v)
			img, err := r.s.store.GetPost(r.ctx, id)
			if errors.Is(err, repository.ErrNotFound) || (err == nil && img.Kind != repository.KindImage) {
				errs.invalidValue("image", fmt.Sprintf("There is no image with ID %d: send the ID of a registered image or an image URL.", id), v)
			} else if err != nil {
				return nil, err
			}
			plan.imageID = id
		default:
			if !canUploadFiles(r.user) {
				errs.invalidParam("image", "Sorry, you are not allowed to register images from URLs: send the ID of a registered image instead.")
			}
			plan.imageURL, _ = v.(string)
		}
	}
	if pt.kind == repository.KindEvent {
		for _, l := range []struct {
			name string
			kind repository.PostKind
			dst  *[]linkRef
			set  *bool
		}{{"venue", repository.KindVenue, &plan.venues, &plan.setVenues}, {"organizer", repository.KindOrganizer, &plan.organizers, &plan.setOrganizers}} {
			v, ok := b.get(l.name)
			if !ok {
				continue
			}
			*l.set = true
			var current []int64
			if cur != nil && cur.Event != nil {
				current = append(append(current, cur.Event.Venues...), cur.Event.Organizers...)
			}
			refs, msg, err := r.parseLinks(v, l.kind, current)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				errs.invalidValue(l.name, msg, v)
			}
			*l.dst = refs
		}
		if v, ok := b.get("categories"); ok {
			plan.categories, plan.setCategories = termItems(v), true
		}
		if v, ok := b.get("tags"); ok {
			plan.tags, plan.setTags = termItems(v), true
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	var err error
	if plan.setCategories {
		if plan.catRefs, err = r.lookupTerms(repository.TaxCategory, plan.categories); err != nil {
			return nil, err
		}
	}
	if plan.setTags {
		if plan.tagRefs, err = r.lookupTerms(repository.TaxTag, plan.tags); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// isIntLike reports whether v is a whole number or a numeric string.
func isIntLike(v any) bool {
	_, ok := asInt(v)
	return ok
}

// termItems turns a categories/tags value into its items ("" or [] → none).
func termItems(v any) []any {
	if isEmptyValue(v) {
		return []any{}
	}
	return asList(v)
}

// parseLinks reads a venue or organizer value (reference 6.8, decisions.md):
// empty values unlink; scalars are IDs or CSV of IDs; objects are {id} or
// inline data; lists mix them. IDs must be existing items of the kind;
// inline data must pass the kind's create validation. An ID the caller may
// not read counts as missing unless current (the event's links) has it.
func (r *request) parseLinks(v any, kind repository.PostKind, current []int64) ([]linkRef, string, error) {
	if isEmptyValue(v) {
		return []linkRef{}, "", nil
	}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	case string:
		items = asList(x)
	default:
		items = []any{x}
	}
	var refs []linkRef
	var ids []int64
	_, ve, or := r.s.postTypes()
	pt := ve
	if kind == repository.KindOrganizer {
		pt = or
	}
	for _, it := range items {
		if isEmptyValue(it) {
			continue
		}
		switch x := it.(type) {
		case map[string]any:
			if idv, ok := x["id"]; ok && !isEmptyValue(idv) {
				id, ok := asInt(idv)
				if !ok || id <= 0 {
					return nil, linkForms(kind, idv), nil
				}
				refs = append(refs, linkRef{id: id})
				ids = append(ids, id)
				continue
			}
			sub := &bag{values: map[string]any{}, fromBody: map[string]bool{}}
			for k, val := range x {
				sub.values[k] = val
			}
			if err := r.validateBag(sub, r.s.postWriteArgs(pt, true)); err != nil {
				var ae *APIError
				if errors.As(err, &ae) {
					return nil, "Invalid " + string(kind) + " data (an object without id creates a " + string(kind) + "): " + ae.Message, nil
				}
				return nil, "", err
			}
			refs = append(refs, linkRef{data: sub})
		default:
			id, ok := asInt(it)
			if !ok || id <= 0 {
				return nil, linkForms(kind, it), nil
			}
			refs = append(refs, linkRef{id: id})
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		found, err := r.s.store.GetPosts(r.ctx, ids)
		if err != nil {
			return nil, "", err
		}
		for _, id := range ids {
			if p := found[id]; p == nil || p.Kind != kind || !r.mayLink(p, current) {
				return nil, fmt.Sprintf("There is no %s with ID %d.", kind, id), nil
			}
		}
	}
	if refs == nil {
		refs = []linkRef{}
	}
	return refs, "", nil
}

// commit creates what the write links to: inline venues and organizers
// (or their duplicates), unknown categories and tags, and new image URLs.
func (plan *writePlan) commit(r *request) error {
	var err error
	for _, l := range []struct {
		refs []linkRef
		set  bool
		pt   func() *postType
		dst  *[]int64
	}{
		{plan.venues, plan.setVenues, func() *postType { _, v, _ := r.s.postTypes(); return v }, &plan.venueIDs},
		{plan.organizers, plan.setOrganizers, func() *postType { _, _, o := r.s.postTypes(); return o }, &plan.organizerIDs},
	} {
		if !l.set {
			continue
		}
		ids := []int64{}
		for _, ref := range l.refs {
			id := ref.id
			if ref.data != nil {
				p, _, err := r.create(l.pt(), ref.data)
				if err != nil {
					return err
				}
				id = p.ID
			}
			if !contains(ids, id) {
				ids = append(ids, id)
			}
		}
		*l.dst = ids
	}
	if plan.setCategories {
		if plan.categoryIDs, err = r.createTerms(repository.TaxCategory, plan.catRefs); err != nil {
			return err
		}
	}
	if plan.setTags {
		if plan.tagIDs, err = r.createTerms(repository.TaxTag, plan.tagRefs); err != nil {
			return err
		}
	}
	if plan.imageURL != "" {
		if plan.imageID, err = r.registerImage(plan.imageURL); err != nil {
			return err
		}
	}
	return nil
}

// registerImage returns the image registered for a URL, registering it
// (with an ID from the post sequence) when new. The URL is never fetched.
func (r *request) registerImage(u string) (int64, error) {
	found, err := r.s.store.FindPosts(r.ctx, repository.PostQuery{Kind: repository.KindImage, ImageURL: u, Limit: 1})
	if err != nil {
		return 0, err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	ext, _ := imageURLExtension(u)
	name := u[strings.LastIndex(u, "/")+1:]
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	now := r.s.now().UTC().Truncate(time.Second)
	img := &repository.Post{Kind: repository.KindImage, Author: r.user.ID, Status: "inherit", Date: now, Modified: now,
		Image: &repository.ImageFields{URL: u, Extension: ext}}
	base := strings.TrimSuffix(name, "."+ext)
	if base == "" {
		base = "image"
	}
	img.Title.Set(r.s.cfg.DefaultLanguage, base)
	img.Slug.Set(r.s.cfg.DefaultLanguage, repository.Slugify(base))
	if img.Slug[r.s.cfg.DefaultLanguage] == "" {
		img.Slug.Set(r.s.cfg.DefaultLanguage, "image")
	}
	if err := r.s.store.CreatePost(r.ctx, img); err != nil {
		return 0, err
	}
	return img.ID, nil
}

// apply writes the plan onto p (a new post, or the current record inside
// UpdatePost's compare-and-swap loop). It may run more than once.
func (plan *writePlan) apply(r *request, p *repository.Post) error {
	b := plan.b
	lang := r.lang
	creating := p.ID == 0
	if v, ok := b.get(plan.pt.nameField); ok {
		s, _ := asString(v)
		p.Title.Set(lang, strings.TrimSpace(s))
	}
	for _, f := range []struct {
		name string
		dst  *repository.Text
	}{{"description", &p.Content}, {"excerpt", &p.Excerpt}} {
		if v, ok := b.get(f.name); ok {
			s, _ := asString(v)
			f.dst.Set(lang, s)
		}
	}
	// Slug: the one sent (normalised), else keep, else derive from the title.
	if v, ok := b.get("slug"); ok && b.sent("slug") {
		s, _ := asString(v)
		if sl := repository.NormalizeSlug(s); sl != "" {
			p.Slug.Set(lang, sl)
		}
	}
	if p.Slug[lang] == "" && p.Title.Has(lang) {
		p.Slug.Set(lang, repository.Slugify(p.Title[lang]))
	}
	if len(p.Slug) == 0 || (p.Slug[lang] == "" && p.Slug[r.s.cfg.DefaultLanguage] == "" && creating) {
		p.Slug.Set(lang, string(p.Kind))
	}
	if plan.setAuthor {
		p.Author = plan.author
	}
	if plan.setImage {
		p.ImageID = plan.imageID
	}
	if v, ok := b.get("password"); ok && p.Kind == repository.KindEvent {
		p.Password, _ = asString(v)
	}
	if err := plan.applyStatusAndDate(r, p, creating); err != nil {
		return err
	}
	p.Modified = r.s.now().UTC().Truncate(time.Second)
	return plan.applyMeta(r, p)
}

// applyStatusAndDate sets the status (scaled back for contributors,
// reference 6.2) and the publish date; a publish date in the future makes
// the post "future", a future post whose date passed is published.
func (plan *writePlan) applyStatusAndDate(r *request, p *repository.Post, creating bool) error {
	b := plan.b
	zone := r.s.cfg.Location
	if p.Event != nil {
		zone, _ = r.s.eventZone(p.Event)
		if v, ok := b.get("timezone"); ok {
			if s, _ := asString(v); s != "" {
				zone, _ = loadZone(s)
			} else {
				zone = r.s.cfg.Location
			}
		}
	}
	now := r.s.now()
	dateSet := false
	if v, ok := b.get("date"); ok {
		s, _ := asString(v)
		t, err := parseDateInRange(s, zone, now, r.lang)
		if err != nil {
			return invalidValue("date", r.dateProblem(s, zone), v)
		}
		p.Date, dateSet = t.UTC().Truncate(time.Second), true
	}
	if v, ok := b.get("date_utc"); ok {
		s, _ := asString(v)
		t, err := parseDateInRange(s, time.UTC, now, r.lang)
		if err != nil {
			return invalidValue("date_utc", r.dateProblem(s, time.UTC), v)
		}
		p.Date, dateSet = t.UTC().Truncate(time.Second), true
	}
	status := ""
	if v, ok := b.get("status"); ok {
		status, _ = asString(v)
	}
	switch {
	case status == "" && creating:
		status = repository.StatusPublish
		if !canPublish(r.user) {
			status = repository.StatusDraft
		}
	case status == "":
		status = p.Status
	}
	if !canPublish(r.user) && (status == repository.StatusPublish || status == repository.StatusFuture || status == repository.StatusPrivate) && status != p.Status {
		status = repository.StatusPending
	}
	if status == repository.StatusPublish && p.Date.After(now) && (dateSet || creating || p.Status != repository.StatusPublish) {
		status = repository.StatusFuture
	}
	if status == repository.StatusFuture && !p.Date.After(now) {
		status = repository.StatusPublish
	}
	p.Status = status
	return nil
}

// applyMeta writes the kind-specific fields (everything but text, slug,
// author, status and dates), so duplicate detection can reuse it.
func (plan *writePlan) applyMeta(r *request, p *repository.Post) error {
	b := plan.b
	str := func(name string, dst *string) {
		if v, ok := b.get(name); ok {
			s, _ := asString(v)
			*dst = strings.TrimSpace(s)
		}
	}
	switch p.Kind {
	case repository.KindEvent:
		return plan.applyEvent(r, p)
	case repository.KindVenue:
		if p.Venue == nil {
			p.Venue = &repository.VenueFields{ShowMap: true, ShowMapLink: true}
		}
		v := p.Venue
		for name, dst := range map[string]*string{"address": &v.Address, "city": &v.City, "country": &v.Country,
			"province": &v.Province, "state": &v.State, "zip": &v.Zip, "phone": &v.Phone, "website": &v.Website} {
			str(name, dst)
		}
		if b.has("stateprovince") {
			str("stateprovince", &v.StateProvince)
		} else if b.has("state") || b.has("province") || b.has("country") || (p.ID == 0 && v.StateProvince == "") {
			v.StateProvince = deriveStateProvince(v)
		}
		if x, ok := b.get("show_map"); ok {
			v.ShowMap = truthy(x)
		}
		if x, ok := b.get("show_map_link"); ok {
			v.ShowMapLink = truthy(x)
		}
		for name, dst := range map[string]**float64{"geo_lat": &v.GeoLat, "geo_lng": &v.GeoLng} {
			if x, ok := b.get(name); ok {
				if f, ok := asFloat(x); ok {
					f := f
					*dst = &f
				} else {
					*dst = nil
				}
			}
		}
		if plan.setImage {
			p.ImageID = plan.imageID
		}
	case repository.KindOrganizer:
		if p.Organizer == nil {
			p.Organizer = &repository.OrganizerFields{}
		}
		o := p.Organizer
		str("phone", &o.Phone)
		str("email", &o.Email)
		str("website", &o.Website)
		if plan.setImage {
			p.ImageID = plan.imageID
		}
	}
	return nil
}

// deriveStateProvince is the original's rule: the state for US (or no)
// country, otherwise the province.
func deriveStateProvince(v *repository.VenueFields) string {
	c := strings.ToLower(strings.TrimSpace(v.Country))
	if (c == "" || c == "us" || c == "usa" || c == "united states" || c == "united states of america") && v.State != "" {
		return v.State
	}
	if v.Province != "" {
		return v.Province
	}
	return v.State
}

// applyEvent writes event fields: dates and zone (reference 6.3), flags,
// cost, website and links.
func (plan *writePlan) applyEvent(r *request, p *repository.Post) error {
	b := plan.b
	if p.Event == nil {
		p.Event = &repository.EventFields{ShowMap: true, ShowMapLink: true}
	}
	e := p.Event
	if v, ok := b.get("timezone"); ok {
		e.Timezone, _ = asString(v)
		e.Timezone = strings.TrimSpace(e.Timezone)
	}
	loc, _ := r.s.eventZone(e)
	now := r.s.now()
	for _, d := range []struct {
		name string
		dst  *string
	}{{"start_date", &e.StartLocal}, {"end_date", &e.EndLocal}} {
		if v, ok := b.get(d.name); ok {
			s, _ := asString(v)
			t, err := parseDateInRange(s, loc, now, r.lang)
			if err != nil {
				return invalidValue(d.name, r.dateProblem(s, loc), v)
			}
			*d.dst = t.In(loc).Format(wpLayout)
		}
	}
	if v, ok := b.get("all_day"); ok {
		e.AllDay, _ = asBool(v)
	}
	if e.AllDay {
		if len(e.StartLocal) >= 10 {
			e.StartLocal = e.StartLocal[:10] + " 00:00:00"
		}
		if len(e.EndLocal) >= 10 {
			e.EndLocal = e.EndLocal[:10] + " 23:59:59"
		}
	}
	start, err1 := time.ParseInLocation(wpLayout, e.StartLocal, loc)
	end, err2 := time.ParseInLocation(wpLayout, e.EndLocal, loc)
	if err1 != nil || err2 != nil {
		return invalidParam("start_date", "The event has no valid start and end: send start_date and end_date, each as "+dateForms+".")
	}
	if end.Before(start) {
		return invalidParam("end_date", fmt.Sprintf("The end date must not be before the start date: end_date is %s, start_date %s (%s).", e.EndLocal, e.StartLocal, loc))
	}
	e.StartUTC, e.EndUTC = start.UTC(), end.UTC()
	for name, dst := range map[string]*bool{"show_map": &e.ShowMap, "show_map_link": &e.ShowMapLink,
		"hide_from_listings": &e.HideFromListings, "sticky": &e.Sticky, "featured": &e.Featured, "ticketed": &e.Ticketed} {
		if v, ok := b.get(name); ok {
			*dst, _ = asBool(v)
		}
	}
	if v, ok := b.get("cost"); ok {
		e.Cost = costValues(v)
	}
	if v, ok := b.get("website"); ok {
		s, _ := asString(v)
		s = strings.TrimSpace(s)
		e.Website = &s
	}
	if plan.setVenues {
		e.Venues = plan.venueIDs
	}
	if plan.setOrganizers {
		e.Organizers = plan.organizerIDs
	}
	if plan.setCategories {
		e.Categories = plan.categoryIDs
	}
	if plan.setTags {
		e.Tags = plan.tagIDs
	}
	return plan.applyRecurrence(r, p)
}

// costValues stores a cost as written: one string, or a list.
func costValues(v any) []string {
	switch x := v.(type) {
	case []any:
		out := []string{}
		for _, e := range x {
			if s, ok := asString(e); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	case json.Number:
		return []string{x.String()}
	}
	s, _ := asString(v)
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []string{strings.TrimSpace(s)}
}

var _ = strconv.Itoa
