// Package lscluster reads installations out of a running Landscaper
// resource cluster, so that the provider can take them over (import).
//
// Given the cluster's REST config, Read looks up one root Installation
// (landscaper.gardener.cloud/v1alpha1) and everything it stands on the way
// Landscaper's installation controller finds it: its Context, the
// DataObjects, Secrets and ConfigMaps it imports, the Targets it imports (by
// name and type only: a Target's config never leaves this package), its
// importDataMappings evaluated, the export DataObjects it wrote, and the
// tree below it (Executions, DeployItems and sub-installations) with what the
// deployers need to adopt what is already installed. The result is plain Go;
// nothing here knows Terraform, and nothing here writes to the cluster.
//
// ParseID parses the import ID "<provider target>/<namespace>/<installation>".
package lscluster
