package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

type out struct {
	Ok         bool     `json:"ok"`
	Words      []string `json:"words"`
	NonLiteral []string `json:"nonliteral"`
	Func       bool     `json:"func"`
}

func litValue(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			v := x.Value
			if strings.ContainsAny(v, "*?[~{") {
				return "", false
			}
			esc := false
			for _, r := range v {
				if esc {
					b.WriteRune(r)
					esc = false
				} else if r == '\\' {
					esc = true
				} else {
					b.WriteRune(r)
				}
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				return "", false
			}
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(l.Value, "\\\"", "\""), "\\$", "$"), "\\\\", "\\"))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var line string
		json.Unmarshal(sc.Bytes(), &line)
		o := out{Words: []string{}, NonLiteral: []string{}}
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		if err == nil {
			o.Ok = true
			syntax.Walk(f, func(n syntax.Node) bool {
				switch x := n.(type) {
				case *syntax.CallExpr:
					if len(x.Args) > 0 {
						if v, ok := litValue(x.Args[0]); ok {
							o.Words = append(o.Words, v)
							// A trap's action runs at the signal: its commands are command words too.
							if v == "trap" && len(x.Args) > 1 {
								act := x.Args[1]
								if a, ok := litValue(act); ok && a == "--" && len(x.Args) > 2 {
									act = x.Args[2]
								}
								if a, ok := litValue(act); ok && a != "-" && a != "--" {
									if f2, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(a), ""); err == nil {
										syntax.Walk(f2, func(n syntax.Node) bool {
											if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
												if w, ok := litValue(c.Args[0]); ok {
													o.Words = append(o.Words, w)
												}
											}
											return true
										})
									}
								}
							}
						} else {
							var sb strings.Builder
							syntax.NewPrinter().Print(&sb, x.Args[0])
							o.NonLiteral = append(o.NonLiteral, sb.String())
						}
					}
				case *syntax.DeclClause:
					o.Words = append(o.Words, x.Variant.Value)
				case *syntax.TestClause:
					o.Words = append(o.Words, "[[")
				case *syntax.LetClause:
					o.Words = append(o.Words, "let")
				case *syntax.FuncDecl, *syntax.CoprocClause:
					o.Func = true
				}
				return true
			})
		}
		enc.Encode(o)
	}
}
