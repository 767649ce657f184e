// Package template renders the template executions of Landscaper blueprints
// (deployExecutions, exportExecutions, importExecutions and
// subinstallationExecutions) with Landscaper's two engines, GoTemplate and
// Spiff, and evaluates the Spiff data mappings of sub-installations.
//
// The package works on plain values (map[string]any as produced by
// encoding/json) so that blueprints written for Landscaper render unchanged
// without a cluster: the same bindings (imports, cd, components, blueprint,
// state, values, deployitems, dataobjects, targets), the same function set,
// the same output keys and the same merge order of several executions.
package template
