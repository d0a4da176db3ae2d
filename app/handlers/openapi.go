package handlers

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// The interface document (GET /{namespace}/doc) is generated from the route
// table and the argument declarations that the router and the validators
// use, so it cannot drift from the service. Response schemas are declared
// once below; the API scenario tests validate every response they receive
// against this document (github.com/getkin/kin-openapi).

// ref is a JSON reference to a component schema.
func ref(name string) *present.Obj { return present.NewObj().Set("$ref", "#/components/schemas/"+name) }

// schemaType is {"type": t}.
func schemaType(t string) *present.Obj { return present.NewObj().Set("type", t) }

// nullable marks a schema as accepting null (redacted list items).
func nullable(o *present.Obj) *present.Obj { return o.Set("nullable", true) }

// object builds an object schema from ordered (name, schema) pairs.
func object(required []string, props ...any) *present.Obj {
	p := present.NewObj()
	for i := 0; i+1 < len(props); i += 2 {
		p.Set(props[i].(string), props[i+1])
	}
	o := present.NewObj().Set("type", "object").Set("properties", p)
	if len(required) > 0 {
		o.Set("required", required)
	}
	return o
}

func arrayOf(items any) *present.Obj {
	return present.NewObj().Set("type", "array").Set("items", items)
}

// componentSchemas are the response shapes: Event, Venue, Organizer, the
// two term shapes, Image and the lists.
func componentSchemas() *present.Obj {
	str, integer, number := schemaType("string"), schemaType("integer"), schemaType("number")
	strs := arrayOf(str)
	dateDetails := object([]string{"year", "month", "day", "hour", "minutes", "seconds"},
		"year", str, "month", str, "day", str, "hour", str, "minutes", str, "seconds", str)
	// width, height, filesize and sizes: The Events Calendar's root only,
	// where known.
	image := present.NewObj().Set("oneOf", []any{schemaType("boolean"), object([]string{"url", "id"}, "url", str, "id", integer, "extension", str,
		"width", integer, "height", integer, "filesize", integer, "sizes", schemaType("object"))})
	urls := object([]string{"self", "collection"}, "self", str, "collection", str, "up", str)
	embeddedTerm := object([]string{"id", "name", "slug", "taxonomy"},
		"name", str, "slug", str, "term_group", integer, "term_taxonomy_id", integer, "taxonomy", str,
		"description", str, "parent", integer, "count", integer, "filter", str, "id", integer, "urls", urls,
		"language", str, "translations", strs)
	term := object([]string{"id", "count", "name", "slug", "taxonomy", "url", "urls"},
		"id", integer, "count", integer, "description", str, "name", str, "slug", str, "taxonomy", str,
		"parent", integer, "meta", arrayOf(present.NewObj()), "url", str, "urls", urls, "language", str, "translations", strs)
	jsonLD := schemaType("object")
	venue := object([]string{"id", "status", "show_map", "show_map_link", "global_id"},
		"id", integer, "author", str, "status", str, "date", str, "date_utc", str, "modified", str, "modified_utc", str,
		"url", str, "venue", present.NewObj().Set("oneOf", []any{str, arrayOf(present.NewObj())}), "description", str, "excerpt", str, "slug", str, "image", image,
		"address", str, "city", str, "country", str, "province", str, "state", str, "zip", str, "phone", str,
		"website", str, "stateprovince", str, "geo_lat", number, "geo_lng", number, "json_ld", jsonLD,
		"show_map", nullable(schemaType("boolean")), "show_map_link", nullable(schemaType("boolean")),
		"global_id", str, "global_id_lineage", strs, "language", str, "translations", strs)
	organizer := object([]string{"id", "status", "global_id"},
		"id", integer, "author", str, "status", str, "date", str, "date_utc", str, "modified", str, "modified_utc", str,
		"url", str, "organizer", present.NewObj().Set("oneOf", []any{str, arrayOf(present.NewObj())}), "description", str, "excerpt", str, "slug", str, "image", image,
		"phone", str, "website", str, "email", str, "json_ld", jsonLD, "global_id", str, "global_id_lineage", strs,
		"language", str, "translations", strs)
	costDetails := object([]string{"currency_symbol", "currency_code", "currency_position", "values"},
		"currency_symbol", str, "currency_code", str,
		"currency_position", present.NewObj().Set("type", "string").Set("enum", []string{"", "prefix", "postfix", "suffix"}), "values", strs)
	nb := func() *present.Obj { return nullable(schemaType("boolean")) }
	event := object([]string{"id", "global_id", "author", "status", "date", "date_utc", "url", "rest_url", "title",
		"description", "excerpt", "slug", "image", "all_day", "start_date", "end_date", "utc_start_date", "utc_end_date",
		"timezone", "timezone_abbr", "cost", "cost_details", "website", "categories", "tags", "venue", "organizer",
		"language", "translations"},
		"id", integer, "global_id", str, "global_id_lineage", strs, "author", str, "status", str,
		"date", str, "date_utc", str, "modified", str, "modified_utc", str, "url", str, "rest_url", str,
		"title", str, "description", str, "excerpt", str, "slug", str, "image", image, "all_day", nb(),
		"start_date", str, "start_date_details", ref("DateDetails"), "end_date", str, "end_date_details", ref("DateDetails"),
		"utc_start_date", str, "utc_start_date_details", ref("DateDetails"), "utc_end_date", str,
		"utc_end_date_details", ref("DateDetails"), "timezone", str, "timezone_abbr", str, "cost", str,
		"cost_details", ref("CostDetails"), "website", str, "show_map", nb(), "show_map_link", nb(),
		"hide_from_listings", nb(), "sticky", nb(), "featured", nb(),
		"categories", arrayOf(ref("EmbeddedTerm")), "tags", arrayOf(ref("EmbeddedTerm")),
		"venue", present.NewObj().Set("oneOf", []any{ref("Venue"), arrayOf(ref("Venue"))}),
		"organizer", arrayOf(ref("Organizer")), "custom_fields", present.NewObj().Set("oneOf", []any{arrayOf(present.NewObj()), schemaType("object")}),
		"ticketed", nb(), "language", str, "translations", strs,
		"recurrence", nullable(object([]string{"rules", "exclusions", "additions"}, "rules", strs, "exclusions", strs, "additions", strs)),
		"event_status", present.NewObj().Set("type", "string").Set("enum", repository.EventStatuses), "event_status_reason", str,
		"source", nullable(object([]string{"id", "uid"}, "id", integer, "uid", str)),
		"occurrence", object([]string{"key", "start"}, "key", str, "start", str, "rest_url", str),
		"parent", integer, // the split route's answer: the series it was split from
		"json_ld", jsonLD,
		"highlight", object([]string{"title", "excerpt"}, "title", str, "excerpt", str))
	list := func(key, item string) *present.Obj {
		return object([]string{key, "rest_url", "total", "total_pages"}, key, arrayOf(ref(item)), "rest_url", str,
			"next_rest_url", str, "previous_rest_url", str, "total", integer, "total_pages", integer)
	}
	// EventList gains facets (facets=...): counts per value per facet.
	eventList := list("events", "Event")
	if props, ok := eventList.Get("properties"); ok {
		counts := schemaType("object").Set("additionalProperties", integer)
		props.(*present.Obj).Set("facets", schemaType("object").Set("additionalProperties", counts))
	}
	errSchema := object([]string{"code", "message", "data"}, "code", str, "message", str,
		"data", object([]string{"status"}, "status", integer, "params", present.NewObj(), "details", present.NewObj(), "term_id", integer))
	webhook := object([]string{"id", "url", "events", "active", "created", "updated"},
		"id", integer, "url", str, "description", str, "events", strs, "active", schemaType("boolean"),
		"disabled_reason", str, "failing_since", str, "created", str, "updated", str, "secret", str)
	runSchema := func() *present.Obj {
		return object([]string{"id", "source_id", "status", "trigger", "started", "finished", "created", "updated", "unchanged", "removed", "failed", "error", "problems"},
			"id", integer, "source_id", integer,
			"status", present.NewObj().Set("type", "string").Set("enum", []string{repository.RunRunning, repository.RunSucceeded, repository.RunFailed}),
			"trigger", str, "started", str, "finished", nullable(schemaType("string")),
			"created", integer, "updated", integer, "unchanged", integer, "removed", integer, "failed", integer,
			"error", nullable(schemaType("string")), "problems", arrayOf(object([]string{"uid", "problem"}, "uid", str, "problem", str)))
	}
	// last_run is a run or null: nullable does not apply beside a $ref,
	// so the run's schema is repeated there.
	run := runSchema()
	source := object([]string{"id", "name", "url", "format", "detected_format", "schedule", "status", "categories", "tags", "on_removed", "author", "created", "updated", "last_run"},
		"id", integer, "name", str, "url", str, "format", str, "detected_format", nullable(schemaType("string")), "schedule", str,
		"status", str, "categories", arrayOf(integer), "tags", arrayOf(integer), "on_removed", str, "author", integer,
		"created", str, "updated", str, "last_run", nullable(runSchema()), "next_run", str)
	attempt := object([]string{"at", "code", "duration_ms"}, "at", str, "code", integer, "error", str, "duration_ms", integer)
	// counts maps names to row counts (a backup's).
	counts := schemaType("object").Set("additionalProperties", integer)
	index := object([]string{"namespace", "routes"}, "namespace", str, "routes", schemaType("object"), "_links", schemaType("object"))
	return present.NewObj().Set("Error", errSchema).Set("DateDetails", dateDetails).Set("CostDetails", costDetails).
		Set("Image", image).Set("EmbeddedTerm", embeddedTerm).Set("Term", term).Set("Venue", venue).
		Set("Organizer", organizer).Set("Event", event).
		Set("EventList", eventList).Set("VenueList", list("venues", "Venue")).
		Set("OrganizerList", list("organizers", "Organizer")).Set("CategoryList", list("categories", "Term")).
		Set("TagList", list("tags", "Term")).Set("NamespaceIndex", index).Set("Document", schemaType("object")).
		Set("JobEnvelope", object([]string{"job"}, "job", object([]string{"id", "state", "done", "total", "started"},
			"id", str, "state", present.NewObj().Set("type", "string").Set("enum", []string{"running", "succeeded", "failed", "cancelled"}),
			"done", integer, "total", integer, "started", str, "finished", str, "error", str, "trigger", str,
			"skipped_count", integer, "skipped", arrayOf(object([]string{"id", "error"}, "id", integer, "error", str))))).
		Set("Source", source).Set("SourceList", object([]string{"sources"}, "sources", arrayOf(ref("Source")))).
		Set("SourceDeleted", object([]string{"deleted", "previous"}, "deleted", schemaType("boolean"), "previous", ref("Source"))).
		Set("SourceRun", run).Set("SourceRunList", object([]string{"runs"}, "runs", arrayOf(ref("SourceRun")))).
		Set("Webhook", webhook).Set("WebhookList", object([]string{"webhooks"}, "webhooks", arrayOf(webhook))).
		Set("WebhookDeleted", object([]string{"deleted", "previous"}, "deleted", schemaType("boolean"), "previous", webhook)).
		Set("WebhookPing", object([]string{"ok", "attempt"}, "ok", schemaType("boolean"), "attempt", attempt)).
		Set("DeliveryList", object([]string{"deliveries"}, "deliveries", arrayOf(object([]string{"id", "type", "item", "status", "attempts", "created", "log"},
			"id", str, "type", str, "item", str, "status", present.NewObj().Set("type", "string").Set("enum", []string{"pending", "delivered", "failed"}),
			"attempts", integer, "created", str, "next_attempt", str, "log", arrayOf(attempt))))).
		Set("SyncStatus", object([]string{"pending_marks", "store", "index", "engine_healthy"},
			"pending_marks", integer, "pending_capped", schemaType("boolean"), "oldest_mark_age_seconds", number,
			"last_batch_at", nullable(schemaType("string")), "last_batch_size", integer, "last_error", str,
			"store", schemaType("object"), "index", schemaType("object"), "engine_healthy", schemaType("boolean"), "engine_error", str,
			"dependent_reindex", arrayOf(object([]string{"kind", "id", "done", "total", "started"},
				"kind", present.NewObj().Set("type", "string").Set("enum", []string{"venue", "term"}),
				"id", integer, "done", integer, "total", integer, "started", str)),
			"failing_count", integer,
			"failing_marks", arrayOf(object([]string{"kind", "id", "attempts", "last_error", "next_attempt", "since"},
				"kind", present.NewObj().Set("type", "string").Set("enum", []string{"post", "term"}),
				"id", integer, "attempts", integer, "last_error", str, "next_attempt", str, "since", str)))).
		Set("User", accountUser).Set("UserList", object([]string{"users"}, "users", arrayOf(ref("User")))).
		Set("Token", accountToken(false)).Set("CreatedToken", accountToken(true)).
		Set("TokenList", object([]string{"tokens"}, "tokens", arrayOf(ref("Token")))).
		Set("RevokedToken", object([]string{"revoked", "id"}, "revoked", schemaType("boolean"), "id", str)).
		Set("Backup", object([]string{"name", "size", "created", "counts"}, "name", str, "size", integer, "created", str,
			"counts", object([]string{"records", "labels", "tables"}, "records", counts, "labels", counts, "tables", counts))).
		Set("BackupList", object([]string{"backups"}, "backups", arrayOf(object([]string{"name", "size", "created"},
			"name", str, "size", integer, "created", str))))
}

// accountUser is the schema of a user on the admin routes.
var accountUser = object([]string{"id", "login", "role", "disabled", "created"},
	"id", schemaType("integer"), "login", schemaType("string"),
	"role", present.NewObj().Set("type", "string").Set("enum", []string{"contributor", "author", "editor", "admin"}),
	"disabled", schemaType("boolean"), "created", schemaType("string"))

// accountToken is the schema of a token on the admin routes; the create
// response adds the secret.
func accountToken(withSecret bool) *present.Obj {
	req := []string{"id", "user", "name", "created", "last_used", "expires"}
	props := []any{"id", schemaType("string"), "user", schemaType("integer"), "name", schemaType("string"),
		"created", schemaType("string"), "last_used", nullable(schemaType("string")), "expires", nullable(schemaType("string"))}
	if withSecret {
		req = append(req, "token")
		props = append(props, "token", schemaType("string"))
	}
	return object(req, props...)
}

// argSchema is the JSON schema of a declared argument.
func argSchema(a Arg) *present.Obj {
	o := present.NewObj()
	if a.Type != tAny {
		o.Set("type", string(a.Type))
	}
	if a.Type == tArray {
		items := present.NewObj()
		if a.Items != tAny {
			items.Set("type", string(a.Items))
		}
		o.Set("items", items)
	}
	if a.Format != "" && a.Type == tString {
		o.Set("format", a.Format)
	}
	if len(a.Enum) > 0 {
		o.Set("enum", a.Enum)
	}
	if a.MaxLen > 0 && a.Type == tString {
		o.Set("maxLength", a.MaxLen)
	}
	if a.MaxItems > 0 && a.Type == tArray {
		o.Set("maxItems", a.MaxItems)
	}
	if a.Default != nil {
		o.Set("default", typedDefault(a))
	}
	return o
}

// typedDefault converts a declared default to the argument's type.
func typedDefault(a Arg) any {
	s, ok := a.Default.(string)
	if !ok {
		return a.Default
	}
	switch a.Type {
	case tInteger:
		n, _ := strconv.Atoi(s)
		return n
	case tNumber:
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case tBoolean:
		b, _ := input.AsBool(s)
		return b
	}
	return s
}

// routeResponses lists the statuses a route answers with and their schemas.
func routeResponses(rt *Route, method string) (ok int, okSchema string, errs []int) {
	p := rt.Path
	switch {
	case p == "":
		return 200, "NamespaceIndex", []int{404}
	case p == "/doc":
		return 200, "Document", nil
	case p == "/admin/reindex" && method == fiber.MethodPost:
		return 202, "JobEnvelope", []int{401, 403, 409, 503}
	case p == "/admin/reindex" && method == fiber.MethodDelete:
		return 200, "JobEnvelope", []int{401, 403, 404, 503}
	case p == "/admin/reindex":
		return 200, "JobEnvelope", []int{401, 403, 404, 503}
	case p == "/admin/sync":
		return 200, "SyncStatus", []int{401, 403, 503}
	case p == "/admin/backups" && method == fiber.MethodPost:
		return 201, "Backup", []int{401, 403, 409, 501, 503}
	case p == "/admin/backups":
		return 200, "BackupList", []int{401, 403, 501, 503}
	case p == "/admin/webhooks" && method == fiber.MethodPost:
		return 201, "Webhook", []int{400, 401, 403, 503}
	case p == "/admin/webhooks":
		return 200, "WebhookList", []int{401, 403, 503}
	case p == "/admin/webhooks/:id/ping":
		return 200, "WebhookPing", []int{401, 403, 404, 503}
	case p == "/admin/webhooks/:id/deliveries":
		return 200, "DeliveryList", []int{400, 401, 403, 404, 503}
	case p == "/admin/webhooks/:id" && method == fiber.MethodDelete:
		return 200, "WebhookDeleted", []int{401, 403, 404, 503}
	case p == "/admin/webhooks/:id":
		return 200, "Webhook", []int{400, 401, 403, 404, 503}
	case p == "/sources" && method == fiber.MethodPost:
		return 201, "Source", []int{400, 401, 403, 503}
	case p == "/sources":
		return 200, "SourceList", []int{401, 403, 503}
	case p == "/sources/:id/run":
		return 202, "SourceRun", []int{401, 403, 404, 409, 503}
	case p == "/sources/:id/runs":
		return 200, "SourceRunList", []int{400, 401, 403, 404, 503}
	case p == "/sources/:id" && method == fiber.MethodDelete:
		return 200, "SourceDeleted", []int{401, 403, 404, 503}
	case p == "/sources/:id":
		return 200, "Source", []int{400, 401, 403, 404, 503}
	case p == "/admin/users":
		return 200, "UserList", []int{401, 403, 503}
	case p == "/admin/users/:id":
		return 200, "User", []int{400, 401, 403, 404, 503}
	case p == "/admin/tokens" && method == fiber.MethodPost:
		return 201, "CreatedToken", []int{400, 401, 403, 503}
	case p == "/admin/tokens":
		return 200, "TokenList", []int{400, 401, 403, 503}
	case p == "/admin/tokens/:token":
		return 200, "RevokedToken", []int{401, 403, 404, 503}
	}
	switch {
	case p == "/events/:id/occurrences":
		return 200, "EventList", []int{400, 403, 404, 503}
	case p == "/events/:id/occurrences/:key/split":
		return 201, "Event", []int{400, 401, 403, 404, 410, 503}
	}
	if strings.HasSuffix(p, ".ics") {
		return 200, calendarSchema, []int{400, 403, 404, 503}
	}
	coll := strings.Split(strings.Trim(p, "/"), "/")[0]
	item := map[string]string{"events": "Event", "venues": "Venue", "organizers": "Organizer", "categories": "Term", "tags": "Term"}[coll]
	isList := !strings.Contains(p, ":")
	switch {
	case isList && method == fiber.MethodGet:
		name := strings.ToUpper(coll[:1]) + coll[1:]
		if coll == "categories" {
			name = "Category"
		} else {
			name = strings.TrimSuffix(name, "s")
		}
		if coll == "categories" || coll == "tags" {
			return 200, name + "List", []int{400}
		}
		return 200, name + "List", []int{400, 404, 503}
	case isList:
		return 201, item, []int{400, 401, 403, 503}
	case method == fiber.MethodGet:
		return 200, item, []int{400, 403, 404, 503}
	case method == fiber.MethodDelete:
		return 200, item, []int{400, 401, 403, 404, 410, 503}
	default:
		return 200, item, []int{400, 401, 403, 404, 503}
	}
}

// calendarSchema marks routes that answer text/calendar (RFC 5545).
const calendarSchema = "Calendar"

// errorDescriptions names each error status.
var errorDescriptions = map[int]string{400: "Invalid or missing parameters.", 401: "Authentication required.",
	403: "Not allowed, not accessible or password-protected.", 404: "No such item, route or page.",
	409: "A rebuild is already running.", 410: "Already in the trash.",
	415: "The body's Content-Type is not application/json, application/x-www-form-urlencoded or multipart/form-data.", 503: "The store or the search engine is unavailable."}

// openAPI builds the interface document.
func (h *docs) openAPI() *present.Obj {
	paths := present.NewObj()
	for _, rt := range h.routes() {
		key := pathVar.ReplaceAllString(rt.Path, "{$1}")
		if key == "" {
			key = "/"
		}
		item, ok := paths.At(key).(*present.Obj)
		if !ok {
			item = present.NewObj()
			paths.Set(key, item)
		}
		for _, m := range rt.Methods {
			item.Set(strings.ToLower(m), h.operation(rt, m))
		}
	}
	return present.NewObj().Set("openapi", "3.0.3").
		Set("info", present.NewObj().Set("title", "Event Calendar REST API").Set("version", h.version).
			Set("description", "Events, venues, organizers, event categories and event tags of the calendar.")).
		Set("servers", h.servers()).
		Set("paths", paths).
		Set("components", present.NewObj().Set("schemas", componentSchemas()).
			Set("securitySchemes", present.NewObj().Set("bearer", present.NewObj().Set("type", "http").Set("scheme", "bearer"))))
}

// operation documents one method of a route.
func (h *docs) operation(rt *Route, method string) *present.Obj {
	op := present.NewObj().Set("operationId", strings.ToLower(method)+opName(rt.Path)).Set("summary", rt.summary)
	var params []any
	for _, name := range pathVar.FindAllStringSubmatch(rt.Path, -1) {
		typ := "string"
		if name[1] == "id" {
			typ = "integer"
		}
		params = append(params, present.NewObj().Set("name", name[1]).Set("in", "path").Set("required", true).Set("schema", schemaType(typ)))
	}
	body := method == fiber.MethodPost || method == fiber.MethodPut || method == fiber.MethodPatch
	props := present.NewObj()
	var required []string
	for _, a := range rt.args {
		if body && a.Name != "multilang_language" {
			props.Set(a.Name, argSchema(a).Set("description", a.Desc))
			if a.Required {
				required = append(required, a.Name)
			}
			continue
		}
		p := present.NewObj().Set("name", a.Name).Set("in", "query").Set("description", a.Desc).Set("required", a.Required).Set("schema", argSchema(a))
		if a.Type == tArray {
			p.Set("style", "form").Set("explode", false)
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		op.Set("parameters", params)
	}
	if body {
		schema := present.NewObj().Set("type", "object").Set("properties", props)
		if len(required) > 0 {
			schema.Set("required", required)
		}
		op.Set("requestBody", present.NewObj().Set("required", len(required) > 0).Set("content", present.NewObj().
			Set("application/json", present.NewObj().Set("schema", schema)).
			Set("application/x-www-form-urlencoded", present.NewObj().Set("schema", schema))))
	}
	okStatus, okSchema, errs := routeResponses(rt, method)
	if body {
		// A body in another Content-Type is refused (params.go).
		errs = append(errs, 415)
	}
	resps := present.NewObj()
	okResp := present.NewObj().Set("description", "Success.").Set("content", present.NewObj().Set("application/json", present.NewObj().Set("schema", ref(okSchema))))
	switch {
	case okSchema == calendarSchema:
		okResp.Set("content", present.NewObj().Set("text/calendar", present.NewObj().Set("schema", schemaType("string"))))
	case rt.Path == "/events" && method == fiber.MethodGet:
		// Accept: text/calendar turns the list into a feed (feeds.go).
		okResp.At("content").(*present.Obj).Set("text/calendar", present.NewObj().Set("schema", schemaType("string")))
	}
	if strings.HasSuffix(okSchema, "List") {
		h := present.NewObj()
		for _, name := range []string{"X-TEC-Total", "X-TEC-TotalPages", "X-WP-Total", "X-WP-TotalPages"} {
			h.Set(name, present.NewObj().Set("schema", schemaType("integer")))
		}
		okResp.Set("headers", h)
	}
	resps.Set(strconv.Itoa(okStatus), okResp)
	if method == fiber.MethodGet {
		// Every 200 GET carries a strong ETag (app/httpcache).
		h, _ := okResp.Get("headers")
		ho, ok := h.(*present.Obj)
		if !ok {
			ho = present.NewObj()
			okResp.Set("headers", ho)
		}
		ho.Set("ETag", present.NewObj().Set("schema", schemaType("string")).Set("description", "Strong validator of this representation; send it back in If-None-Match."))
		resps.Set("304", present.NewObj().Set("description", "Not modified: If-None-Match names the current ETag."))
	}
	sort.Ints(errs)
	for _, code := range errs {
		resps.Set(strconv.Itoa(code), present.NewObj().Set("description", errorDescriptions[code]).
			Set("content", present.NewObj().Set("application/json", present.NewObj().Set("schema", ref("Error")))))
	}
	resps.Set("default", present.NewObj().Set("description", "Error envelope.").
		Set("content", present.NewObj().Set("application/json", present.NewObj().Set("schema", ref("Error")))))
	op.Set("responses", resps)
	op.Set("security", operationSecurity(rt))
	return op
}

// operationSecurity is an operation's security requirement. Writes and
// the admin routes need a bearer token. Every other route accepts one
// optionally (an editor's token shows drafts and private items), which
// OpenAPI spells as a list of alternatives whose first is the empty
// requirement: anonymous, or a bearer token. Every operation declares its
// security, as redocly's recommended rule security-defined requires.
func operationSecurity(rt *Route) []any {
	bearer := present.NewObj().Set("bearer", []any{})
	if rt.Write || strings.HasPrefix(rt.Path, "/admin/") {
		return []any{bearer}
	}
	return []any{present.NewObj(), bearer}
}

// opName turns a route path into an operationId suffix.
func opName(p string) string {
	var b strings.Builder
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		part = strings.TrimPrefix(part, ":")
		for _, w := range strings.Split(part, "-") {
			if w != "" {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	if b.Len() == 0 {
		return "Index"
	}
	return b.String()
}

// serveDoc serves GET /{namespace}/doc.
func (h *docs) serveDoc(r *Request) error { return present.SendJSON(r.c, 200, h.openAPI()) }

// servers lists the roots the API is served at: APIRoot, and with
// TEC_COMPAT The Events Calendar's root as well (the document under that
// root names it first).
func (h *docs) servers() []any {
	out := []any{present.NewObj().Set("url", h.cfg.SiteURL+h.cfg.APIRoot())}
	for _, root := range h.cfg.APIRoots() {
		if root != h.cfg.APIRoot() {
			out = append(out, present.NewObj().Set("url", h.cfg.SiteURL+root).Set("description", "The Events Calendar's root (TEC_COMPAT)"))
		}
	}
	return out
}
