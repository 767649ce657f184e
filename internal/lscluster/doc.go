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
// nothing here knows Terraform.
//
// The other way round, a Spec describes an installation to be run by
// Landscaper's controllers (remote mode): Spec.Objects renders the
// Installation with its blueprint inline or from a component, the Context,
// DataObjects and Secrets of its imports, and a Target per target import
// whose config sits in a Secret (secretRef), never in the Target. A Writer
// applies them with server-side apply under one field manager, starts a job
// with the reconcile annotation, waits for Succeeded or Failed and reads
// the tree's phases and Landscaper's errors, reads the export DataObjects
// and Targets, and deletes the Installation (waiting for Landscaper to
// remove what it installed) before the objects it stood on.
//
// ParseID parses the import ID "<provider target>/<namespace>/<installation>".
package lscluster
