package present

import "bytes"

// NamespaceIndex is the answer of GET /{namespace}: every route with its
// methods and parameters, as the WordPress REST server describes a
// namespace ({namespace, routes: {<path>: RouteDoc}, _links: {up}}).
type NamespaceIndex struct {
	Namespace string
	// Routes are keyed by their path, in the order of the route table.
	Routes []*RouteDoc
	// Up is the REST root's address.
	Up string
}

func (x *NamespaceIndex) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("namespace", x.Namespace)
	w.key("routes")
	routes := openObj(buf)
	for _, rt := range x.Routes {
		routes.dataKey(rt.Path)
		if err := rt.writeJSON(buf); err != nil {
			return err
		}
	}
	if err := routes.close(); err != nil {
		return err
	}
	w.key("_links")
	writeLinks(buf, "up", x.Up)
	return w.close()
}

// MarshalJSON writes the index.
func (x *NamespaceIndex) MarshalJSON() ([]byte, error) { return marshal(x) }

// writeLinks writes {<rel>: [{href}]}.
func writeLinks(buf *bytes.Buffer, rel, href string) {
	buf.WriteString(`{"` + rel + `":[{"href":`)
	writeString(buf, href)
	buf.WriteString(`}]}`)
}

// RouteDoc is one route of the namespace index: its methods (those of
// every endpoint), its endpoints, and a self link for a route without
// path parameters.
type RouteDoc struct {
	Path      string
	Namespace string
	Methods   []string
	Endpoints []EndpointDoc
	// Self is the route's address, "" (omitted) for routes with
	// parameters in their path.
	Self string
}

func (rt *RouteDoc) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("namespace", rt.Namespace)
	w.strs("methods", rt.Methods)
	w.typed("endpoints", listOf[EndpointDoc](rt.Endpoints))
	if rt.Self != "" {
		w.key("_links")
		writeLinks(buf, "self", rt.Self)
	}
	return w.close()
}

// EndpointDoc is one endpoint of a route: its methods and parameters.
type EndpointDoc struct {
	Methods []string
	Args    []ArgDoc
}

func (ep EndpointDoc) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.strs("methods", ep.Methods)
	w.key("args")
	args := openObj(buf)
	for _, a := range ep.Args {
		args.dataKey(a.Name)
		if err := a.writeJSON(buf); err != nil {
			return err
		}
	}
	if err := args.close(); err != nil {
		return err
	}
	return w.close()
}

// ArgDoc describes a parameter with JSON-schema keywords and required.
type ArgDoc struct {
	Name        string
	Type        string // omitted when empty (any type)
	Format      string // omitted when empty
	Description string // omitted when empty
	Default     any    // omitted when nil
	Enum        []string
	// Array adds items, with ItemsType as its type when set.
	Array     bool
	ItemsType string
	Required  bool
}

func (a *ArgDoc) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.strSet("type", a.Type)
	w.strSet("format", a.Format)
	w.strSet("description", a.Description)
	if a.Default != nil {
		w.val("default", a.Default)
	}
	if len(a.Enum) > 0 {
		w.strs("enum", a.Enum)
	}
	if a.Array {
		w.key("items")
		items := openObj(buf)
		items.strSet("type", a.ItemsType)
		if err := items.close(); err != nil {
			return err
		}
	}
	w.bool("required", a.Required)
	return w.close()
}
