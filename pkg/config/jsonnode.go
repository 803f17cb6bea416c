package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// looksJSON reports whether data (after a UTF-8 byte order mark, white
// space and comments) starts a JSON object.
func looksJSON(data []byte) bool {
	s := stripJSONC(bytes.TrimPrefix(data, []byte("\ufeff")))
	s = bytes.TrimLeft(s, " \t\r\n")
	return len(s) > 0 && s[0] == '{'
}

// jsonLines maps byte offsets of one document to 1-based line numbers.
type jsonLines []int // offsets at which lines 2, 3, ... start

func newJSONLines(data []byte) jsonLines {
	var ls jsonLines
	for i, c := range data {
		if c == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

// line returns the line holding byte offset off.
func (ls jsonLines) line(off int64) int {
	return sort.Search(len(ls), func(i int) bool { return int64(ls[i]) > off }) + 1
}

// parseJSONNode parses one JSON (or JSONC: // and /* */ comments, trailing
// commas, as VS Code's mcp.json allows) document into a yaml.Node tree
// whose Line fields come from the byte offsets, so the schema walk and
// every later problem name the right line. Errors carry the line.
func parseJSONNode(data []byte) (*yaml.Node, error) {
	data = stripJSONC(bytes.TrimPrefix(data, []byte("\ufeff")))
	p := &jsonParser{data: data, ls: newJSONLines(data), dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	n, err := p.value()
	if err == nil {
		if _, err = p.dec.Token(); err == io.EOF {
			return n, nil
		}
		if err == nil {
			err = fmt.Errorf("line %d: want one JSON value, found more", p.ls.line(p.start()))
		}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("line %d: invalid JSON: %s", p.ls.line(se.Offset), se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("line %d: invalid JSON: unexpected end of input", p.ls.line(int64(len(data))))
	}
	return nil, err
}

type jsonParser struct {
	data  []byte
	ls    jsonLines
	dec   *json.Decoder
	depth int
}

// maxJSONDepth bounds nesting; real client configs are a few levels deep.
const maxJSONDepth = 100

// start returns the offset of the next token: the decoder's offset past
// separators and white space.
func (p *jsonParser) start() int64 {
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return off
}

// value reads one JSON value into a node.
func (p *jsonParser) value() (*yaml.Node, error) {
	line := p.ls.line(p.start())
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if p.depth++; p.depth > maxJSONDepth {
			return nil, fmt.Errorf("line %d: JSON nested too deeply", line)
		}
		defer func() { p.depth-- }()
		if t == '{' {
			return p.object(line)
		}
		return p.array(line)
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t, Style: yaml.DoubleQuotedStyle, Line: line}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String(), Line: line}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t), Line: line}, nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line}, nil
}

func (p *jsonParser) object(line int) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: line}
	for p.dec.More() {
		kline := p.ls.line(p.start())
		tok, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string) // the decoder only yields string keys
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: kline}, v)
	}
	_, err := p.dec.Token() // '}'
	return n, err
}

func (p *jsonParser) array(line int) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line}
	for p.dec.More() {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
	}
	_, err := p.dec.Token() // ']'
	return n, err
}

// stripJSONC returns data with // and /* */ comments and trailing commas
// (before } or ]) replaced by spaces, outside strings; newlines are kept,
// so byte offsets and lines are unchanged.
func stripJSONC(data []byte) []byte {
	out := bytes.Clone(data)
	inStr, lastComma := false, -1
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr, lastComma = true, -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c != ' ' && c != '\t' && c != '\r' && c != '\n':
			lastComma = -1
		}
	}
	return out
}
