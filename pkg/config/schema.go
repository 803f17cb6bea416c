package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// index maps dotted key paths ("backends[1].url") to the YAML nodes they
// came from, so problems found after decoding can name a line.
type index struct {
	root    int // line of the document's top-level node
	entries map[string]entry
	bad     map[string]bool // paths already reported as malformed
	// alias maps a key path of the converted Config ("backends[0]") to
	// the path it came from in an imported file (`mcpServers["My Server"]`),
	// so problems name what the user wrote.
	alias map[string]string
}

type entry struct {
	key, val *yaml.Node // key is nil for sequence items and the root
}

func newIndex() *index {
	return &index{root: 1, entries: map[string]entry{}, bad: map[string]bool{}, alias: map[string]string{}}
}

// set reports whether path is present with a non-null value.
func (ix *index) set(path string) bool {
	e, ok := ix.entries[path]
	return ok && !isNull(e.val)
}

// value returns the scalar text written at path, or "".
func (ix *index) value(path string) string {
	if e, ok := ix.entries[path]; ok && e.val.Kind == yaml.ScalarNode {
		return e.val.Value
	}
	return ""
}

// line returns the line of path's key (or value, for list items). For a
// missing path it returns the line of the nearest present ancestor.
func (ix *index) line(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if e, ok := ix.entries[p]; ok {
			if e.key != nil {
				return e.key.Line
			}
			return e.val.Line
		}
	}
	return ix.root
}

// display returns the path to show for key: the imported file's path for
// its longest aliased prefix, or key itself.
func (ix *index) display(key string) string {
	for p := key; p != ""; p = parentPath(p) {
		if a, ok := ix.alias[p]; ok {
			return a + key[len(p):]
		}
	}
	return key
}

// isBad reports whether path or one of its ancestors was malformed.
func (ix *index) isBad(path string) bool {
	for p := path; p != ""; p = parentPath(p) {
		if ix.bad[p] {
			return true
		}
	}
	return false
}

// parentPath strips the last ".key", "[n]" or `["key"]` from path.
func parentPath(p string) string {
	if strings.HasSuffix(p, `"]`) {
		if i := strings.LastIndex(p, `["`); i >= 0 {
			return p[:i]
		}
	}
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

var simpleKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// joinKey appends a mapping key to path: ".key", or `["key"]` when key is
// not a simple word.
func joinKey(path, key string) string {
	if !simpleKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func joinIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// maxVisits bounds the schema walk (nodes visited, counting each alias use)
// so alias bombs cannot blow it up; real configurations are far smaller.
const maxVisits = 200_000

// walker checks a YAML node tree against a Go type's yaml tags: unknown
// keys, duplicate keys, wrong node kinds and undecodable scalars. It fills
// the index, and removes duplicate and unusable merge keys so the later
// Decode sees a clean tree.
type walker struct {
	ix     *index
	ps     *problems
	visits int
}

func (w *walker) fail(line int, path, msg string) {
	w.ix.bad[path] = true
	w.ps.at(line, path, msg)
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string, key *yaml.Node) {
	if w.visits++; w.visits > maxVisits {
		if w.visits == maxVisits+1 {
			w.fail(n.Line, path, "document too large (excessive aliasing?)")
		}
		return
	}
	n = deref(n)
	for t.Kind() == reflect.Pointer { // optional sections (auth)
		t = t.Elem()
	}
	if _, seen := w.ix.entries[path]; !seen {
		w.ix.entries[path] = entry{key: key, val: n}
	}
	if isNull(n) {
		return
	}
	switch {
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.fail(n.Line, path, "want a mapping, got "+kindName(n))
			return
		}
		fields := yamlFields(t)
		for _, kv := range w.pairs(n, path) {
			name := kv[0].Value
			f, ok := fields[name]
			if !ok {
				w.ps.at(kv[0].Line, joinKey(path, name), fmt.Sprintf("unknown key %q", name))
				continue
			}
			w.walk(kv[1], f.Type, joinKey(path, name), kv[0])
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.fail(n.Line, path, "want a mapping, got "+kindName(n))
			return
		}
		for _, kv := range w.pairs(n, path) {
			w.walk(kv[1], t.Elem(), joinKey(path, kv[0].Value), kv[0])
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.fail(n.Line, path, "want a list, got "+kindName(n))
			return
		}
		for i, item := range n.Content {
			w.walk(item, t.Elem(), joinIndex(path, i), nil)
		}
	default:
		w.scalar(n, t, path)
	}
}

// scalar checks that n decodes into a value of type t.
func (w *walker) scalar(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.ScalarNode {
		w.fail(n.Line, path, "want "+typeName(t)+", got "+kindName(n))
		return
	}
	err := n.Decode(reflect.New(t).Interface())
	if err == nil {
		return
	}
	msg := fmt.Sprintf("want %s, got %q", typeName(t), n.Value)
	if reflect.PointerTo(t).Implements(reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()) {
		_, msg = splitYAMLError(err)
	}
	w.fail(n.Line, path, msg)
}

// pairs returns n's key/value pairs with merge keys ("<<") flattened in,
// explicit keys first. It reports and removes duplicate explicit keys,
// non-scalar keys and merges of non-mappings.
func (w *walker) pairs(n *yaml.Node, path string) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	var merges []*yaml.Node
	seen := map[string]*yaml.Node{}
	kept := n.Content[:0:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case isMergeKey(k):
			if !mergeable(v) {
				w.ps.at(k.Line, joinKey(path, "<<"), "merge (<<) needs a mapping or a list of mappings")
				continue
			}
			merges = append(merges, v)
		case k.Kind != yaml.ScalarNode:
			w.ps.at(k.Line, path, "mapping key must be a plain value, got "+kindName(k))
			continue
		case seen[k.Value] != nil:
			w.ps.at(k.Line, joinKey(path, k.Value),
				fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, seen[k.Value].Line))
			continue
		default:
			seen[k.Value] = k
			out = append(out, [2]*yaml.Node{k, v})
		}
		kept = append(kept, k, v)
	}
	n.Content = kept
	for _, m := range merges {
		m = deref(m)
		maps := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			maps = m.Content
		}
		for _, mm := range maps {
			for _, kv := range w.pairs(deref(mm), path) {
				if seen[kv[0].Value] == nil {
					seen[kv[0].Value] = kv[0]
					out = append(out, kv)
				}
			}
		}
	}
	return out
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge")
}

func mergeable(v *yaml.Node) bool {
	v = deref(v)
	if v.Kind == yaml.MappingNode {
		return true
	}
	if v.Kind != yaml.SequenceNode {
		return false
	}
	for _, c := range v.Content {
		if deref(c).Kind != yaml.MappingNode {
			return false
		}
	}
	return true
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.StructField

// yamlFields maps a struct's yaml tag names to its fields.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.StructField)
	}
	m := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f
	}
	fieldCache.Store(t, m)
	return m
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func kindName(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

func typeName(t reflect.Type) string {
	if t == reflect.TypeOf(Duration(0)) {
		return "a duration"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// splitYAMLError turns a yaml.v3 error into (line, message); line is 0 when
// the error names none. A *yaml.TypeError yields its first entry.
func splitYAMLError(err error) (int, string) {
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}
