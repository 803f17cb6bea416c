// Package livemcpbench loads the LiveMCPBench tool catalogue and annotated
// tasks (../shared/data/livemcpbench beside the repository: tools.json,
// tasks.json; Apache-2.0, see its README) and scores a tool search on them.
package livemcpbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
)

// Server is one of the catalogue's MCP servers with its tools.
type Server struct {
	Name        string
	Description string
	Category    string
	Tools       []Tool
}

// Tool is one tool as the server advertises it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Task is one annotated task: a question and the tool names, in order, a
// person used to solve it.
type Task struct {
	ID       string   `json:"task_id"`
	Category string   `json:"category"`
	Question string   `json:"question"`
	Tools    []string `json:"tools"`
}

// Dir is the data directory: $LIVEMCPBENCH_DIR, else shared/data/livemcpbench
// beside the repository root (found from this source file).
func Dir() string {
	if d := os.Getenv("LIVEMCPBENCH_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "livemcpbench")
}

// Load reads tools.json and tasks.json from dir; servers keep the file's
// order and tools are sorted by name within a server.
func Load(dir string) ([]Server, []Task, error) {
	var raw []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Category    string `json:"category"`
		Tools       map[string]struct {
			Tools []Tool `json:"tools"`
		} `json:"tools"`
	}
	if err := readJSON(filepath.Join(dir, "tools.json"), &raw); err != nil {
		return nil, nil, err
	}
	servers := make([]Server, 0, len(raw))
	for _, r := range raw {
		s := Server{Name: r.Name, Description: r.Description, Category: r.Category}
		for _, t := range r.Tools {
			s.Tools = append(s.Tools, t.Tools...)
		}
		sort.SliceStable(s.Tools, func(i, j int) bool { return s.Tools[i].Name < s.Tools[j].Name })
		servers = append(servers, s)
	}
	var tasks []Task
	if err := readJSON(filepath.Join(dir, "tasks.json"), &tasks); err != nil {
		return nil, nil, err
	}
	return servers, tasks, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
