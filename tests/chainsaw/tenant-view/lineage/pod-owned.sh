#!/usr/bin/env bash
# What the release's workloads and operators would make, with no
# helm-controller labels of their own (the post-renderer labels only what
# the chart renders) and an owner reference, as their controllers write it:
#   - the Pod of the Job postgres-db-init-job (the job controller);
#   - the claim data-postgres-db-0 of the StatefulSet postgres-db (the
#     statefulset controller, persistentVolumeClaimRetentionPolicy Delete);
#   - the Service postgres-db-rw, as CloudNativePG makes it for its Cluster
#     (the StatefulSet stands in for the Cluster).
set -euo pipefail
ns=tenant-e2elineage
uid=$(kubectl -n "$ns" get job postgres-db-init-job -o jsonpath='{.metadata.uid}')
kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: postgres-db-init-job-x1
  namespace: ${ns}
  labels:
    job-name: postgres-db-init-job
  ownerReferences:
  - apiVersion: batch/v1
    kind: Job
    name: postgres-db-init-job
    uid: ${uid}
    controller: true
    blockOwnerDeletion: true
spec:
  automountServiceAccountToken: false
  restartPolicy: OnFailure
  containers:
  - name: postgres
    image: postgres:17
YAML
sts=$(kubectl -n "$ns" get statefulset postgres-db -o jsonpath='{.metadata.uid}')
kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-postgres-db-0
  namespace: ${ns}
  labels:
    cnpg.io/cluster: postgres-db
  ownerReferences:
  - apiVersion: apps/v1
    kind: StatefulSet
    name: postgres-db
    uid: ${sts}
    controller: true
    blockOwnerDeletion: true
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
---
apiVersion: v1
kind: Service
metadata:
  name: postgres-db-rw
  namespace: ${ns}
  labels:
    cnpg.io/cluster: postgres-db
  ownerReferences:
  - apiVersion: apps/v1
    kind: StatefulSet
    name: postgres-db
    uid: ${sts}
    controller: true
spec:
  ports:
  - {name: postgres, port: 5432}
  selector:
    cnpg.io/cluster: postgres-db
    role: primary
YAML
