package installation

import (
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// Adopting is the status an installation imported from a Landscaper
// cluster starts with: nothing has run here yet, and every deploy item
// that can take over what Landscaper's deployer installed carries its
// adoption (engine.ItemStatus.Adopt). Items are keyed as deploy_items
// keys them: "<sub-installation path>/<item>", the root's by name.
//
// The items are left untriggered (phase Init), because their specs are
// known only once the tree is rendered: an item the first apply renders
// runs with its adoption, one it does not render is dropped without its
// deployer being called, so nothing Landscaper installed is deleted on a
// guess.
func Adopting(items map[string]*deployer.Adoption) *Status {
	root := &Status{Phase: core.PhaseInit, Subs: map[string]*Status{}}
	for key, a := range items {
		if a == nil {
			continue
		}
		node := root
		path, item := "", key
		if i := strings.LastIndex(key, "/"); i >= 0 {
			path, item = key[:i], key[i+1:]
		}
		if path != "" {
			for _, name := range strings.Split(path, "/") {
				next := node.Subs[name]
				if next == nil {
					next = &Status{Phase: core.PhaseInit, Subs: map[string]*Status{}}
					node.Subs[name] = next
				}
				node = next
			}
		}
		if node.Execution.Items == nil {
			node.Execution.Items = map[string]*engine.ItemStatus{}
		}
		node.Execution.Items[item] = &engine.ItemStatus{Phase: core.PhaseInit, Adopt: a}
	}
	return root
}
