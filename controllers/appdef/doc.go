// Package main is the appdef controller: it serves one CustomResourceDefinition
// per ApplicationDefinition, so each definition's kind is live in
// apps.cozystack.io/v1alpha1 within seconds and the API server validates every
// instance against the definition's schema. The full contract, with examples,
// is docs/appdef.md; the summary:
//
// # What it reads
//
// ApplicationDefinition (cozystack.io/v1alpha1, cluster-scoped):
//   - metadata.name, uid, generation, creationTimestamp (the older of two
//     clashing definitions keeps the names), deletionTimestamp, finalizers;
//   - spec.application.kind, plural, singular, openAPISchema;
//   - spec.backend.type, and the prefix of spec.backend.helm,
//     spec.backend.terraform or the legacy spec.release (read as a Helm
//     backend when spec.backend is unset; the stored object is never
//     rewritten). Nothing else in the spec matters to this controller.
//
// CustomResourceDefinitions labelled cozystack.io/application-definition, and
// any named like a definition's CRD (<plural>.apps.cozystack.io) to tell ours
// from foreign ones. The ValidatingAdmissionPolicy and binding
// cozyplane-appdef-instance-keys, and no other.
// Instances of a served kind, metadata only, while its definition is deleted.
// The APIService v1alpha1.apps.cozystack.io (that one only): when it proxies
// the group to a Service, as upstream Cozystack's aggregated API server does,
// the API server never reaches the CRDs, and every definition says so.
//
// # What it writes
//
//   - CRD <plural>.apps.cozystack.io (server-side apply, field manager
//     cozystack-appdef, controller ownerReference to the definition), built by
//     pkg/schema.BuildCRD and labelled cozystack.io/application-definition=<name>,
//     cozystack.io/backend=<Helm|Terraform>. A CRD of that name it does not
//     control is never touched.
//   - The spec of the ValidatingAdmissionPolicy cozyplane-appdef-instance-keys
//     (installed by the policies chart; never created or deleted here): for
//     every kind whose spec is free-form at the top level
//     (preserve-unknown-fields), it refuses top-level keys starting with "_"
//     and, for Terraform kinds, keys that are not HCL identifiers (CRD
//     validation rules cannot see preserved fields).
//   - ClusterRoles cozystack:app:<plural>:view, :edit and :admin (server-side
//     apply, controller ownerReference to the definition), labelled for
//     aggregation into the built-in view, edit and admin roles, and
//     :tenant-view and :tenant-admin, into Cozystack's cozy:tenant:view and
//     cozy:tenant:admin: reading, and for edit, admin and tenant-admin
//     writing, the kind's instances; nobody's status. A
//     ClusterRole of that name it does not control is never touched (the
//     Ready message names it; event RoleNotOwned).
//   - Finalizer cozystack.io/instances on every definition.
//   - Status, written once per reconcile and only when it changed:
//     observedGeneration, backend (the resolved type), crdName, instances
//     (while deleting), and the kstatus conditions Ready, Reconciling and
//     Stalled.
//   - Events: CRDCreated, CRDUpdated, CRDCorrected, CRDDeleted,
//     PolicyUpdated, PolicyCorrected, RolePublished, RoleDeleted,
//     RoleNotOwned, Served, Stalled, DeletionWaiting, Released.
//   - The readiness gauge (pkg/readymetric), one series per definition.
//   - The ResourceQuota cozystack-instances in every namespace named
//     tenant-* (--quota-namespace-prefix), labelled
//     app.kubernetes.io/managed-by=cozystack-appdef: count/<plural>.apps.cozystack.io
//     of every definition's kind, --instance-quota each, the Tenant kind
//     --tenant-quota; the namespace annotations apps.cozystack.io/instance-quota
//     and apps.cozystack.io/tenant-quota (a number, or unlimited) override
//     them there. A quota of that name without the label is never touched
//     (event InstanceQuotaNotOwned on the namespace). internal/quota.
//
// Ready reasons (api/cozystack/v1alpha1/conditions.go):
//
//	Ready=True                       Served: the CRD is established and serves the kind
//	Ready=Unknown, Reconciling=True  Progressing (CRD written, or a transient error),
//	                                 CRDNotEstablished (not Established yet),
//	                                 InstancesRemain (deleting; status.instances hold it)
//	Ready=False, Stalled=True        InvalidJSON, InvalidSchema, InvalidVariableName,
//	                                 ReservedField, NameClash, ForeignCRD, PolicyMissing,
//	                                 KindRenamed, CRDRejected, CRDNotEstablished (names
//	                                 refused by the API server), GroupShadowed (an
//	                                 APIService sends the group to a Service; the
//	                                 message names both and says how to fix it)
//
// # Deletion
//
// While instances of the kind exist, the definition and its CRD stay; status
// counts them (polled every few seconds). Once none is left, the controller
// deletes its CRD and ClusterRoles (only those it controls) and removes the
// finalizer.
//
// RBAC is listed in rbac.md and in the +kubebuilder:rbac markers of
// internal/controller.
package main
