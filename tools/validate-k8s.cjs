#!/usr/bin/env node
// Validates Kubernetes manifests offline against the Kubernetes API's OpenAPI schemas, as the
// npm kubernetes-models package compiles them (types, enums, required fields, formats), and
// refuses fields the schema does not have (what `kubectl apply --validate=strict` would): the
// compiled validators read every field they know, so a field of the manifest that the
// validator never read is unknown to the API.
//   node tools/validate-k8s.cjs NODE_MODULES_DIR FILE.yaml...
// NODE_MODULES_DIR holds kubernetes-models and yaml (tools/setup-debian.sh --test installs them
// in /var/tmp/perfgap-tools/k8s/node_modules). Exit 0: every document valid; 1: a document is
// not (one line each: file, document number, kind/name, what); 2: could not run.
'use strict';
const path = require('path');
const fs = require('fs');
const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error('usage: validate-k8s.cjs NODE_MODULES_DIR FILE.yaml...');
  process.exit(2);
}
const load = (name) => require(path.join(modules, name));
let YAML;
try {
  YAML = load('yaml');
  load('kubernetes-models/package.json');
} catch (e) {
  console.error(`validate-k8s: ${modules}: no kubernetes-models or yaml there (${e.message.split('\n')[0]})`);
  process.exit(2);
}

// apps/v1 DaemonSet -> _schemas/IoK8sApiAppsV1DaemonSet.js; v1 Pod -> IoK8sApiCoreV1Pod.
function schemaFor(apiVersion, kind) {
  const parts = String(apiVersion).split('/');
  const group = parts.length === 2 ? parts[0] : 'core';
  const version = parts[parts.length - 1];
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const name = 'IoK8sApi' + group.split('.')[0].split('-').map(cap).join('') + cap(version) + kind;
  const file = path.join(modules, 'kubernetes-models', '_schemas', name + '.js');
  return fs.existsSync(file) ? require(file).validate : null;
}

// The document behind a proxy that notes every field read; `unread` keeps the paths of the
// fields no one has read yet.
function tracked(value, where, unread, seen) {
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return seen.get(value);
  for (const k of Object.keys(value)) unread.add(where + '/' + k);
  const proxy = new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key === 'string' && Object.prototype.hasOwnProperty.call(target, key)) {
        unread.delete(where + '/' + key);
        return tracked(target[key], where + '/' + key, unread, seen);
      }
      return Reflect.get(target, key, receiver);
    },
  });
  seen.set(value, proxy);
  return proxy;
}

let bad = 0, checked = 0;
for (const file of files) {
  let docs;
  try {
    docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`${file}: ${e.message.split('\n')[0]}`);
    process.exit(2);
  }
  docs.forEach((doc, i) => {
    const where = `${file}: document ${i + 1}`;
    if (doc.errors.length) {
      console.log(`${where}: YAML: ${doc.errors[0].message.split('\n')[0]}`);
      bad++;
      return;
    }
    const obj = doc.toJS();
    if (obj === null) return;  // an empty document
    const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
    const validate = schemaFor(obj.apiVersion, obj.kind);
    if (!validate) {
      console.log(`${where} ${name}: no schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`);
      bad++;
      return;
    }
    const unread = new Set();
    const ok = validate(tracked(obj, '', unread, new Map()));
    checked++;
    for (const e of ok ? [] : validate.errors) {
      console.log(`${where} ${name}: ${e.instancePath || '/'}: ${e.message || e.keyword} ${JSON.stringify(e.params || {})}`);
      bad++;
    }
    for (const p of unread) {
      console.log(`${where} ${name}: ${p}: unknown field`);
      bad++;
    }
  });
}
console.log(`validate-k8s: ${checked} object(s) checked, ${bad} problem(s)`);
process.exit(bad ? 1 : 0);
