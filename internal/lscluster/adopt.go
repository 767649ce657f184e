package lscluster

import "github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"

// Adoption is what the item imported from the DeployItem takes over on its
// first run: the objects its deployer labelled and recorded, and its helm
// release. It is nil for types whose objects no deployer here can adopt.
func (d DeployItem) Adoption() *deployer.Adoption {
	if d.ManagedLabel == "" {
		return nil
	}
	a := &deployer.Adoption{DeployItem: d.Object}
	for _, o := range d.ManagedResources {
		a.Objects = append(a.Objects, deployer.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name})
	}
	if r := d.Release; r != nil {
		a.Release = &deployer.ObjectRef{Namespace: r.Namespace, Name: r.Name}
	}
	return a
}

// Adoptions are the adoptions of every deploy item of the tree that has
// one, keyed as DeployItems keys them.
func (i *Installation) Adoptions() map[string]*deployer.Adoption {
	out := map[string]*deployer.Adoption{}
	for key, di := range i.DeployItems() {
		if a := di.Adoption(); a != nil {
			out[key] = a
		}
	}
	return out
}
