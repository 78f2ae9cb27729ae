"""Checks template.yaml against the workspace, beyond what cfn-lint and `sam validate --lint` see.

- Every function is a Rust function SAM builds with cargo-lambda (provided.al2023, bootstrap,
  arm64, BuildMethod rust-cargolambda) and its Binary names a Lambda binary the workspace builds.
- Every MCP_* variable the gateway reads (shared/src/config/gateway.rs, shared/src/config/auth.rs) and
  the README documents is set.
- After the SAM transform, every path of the HTTP API sends every method (ANY) to the function
  whose MCP_ENDPOINT_PATH it serves, so GET gets the gateway's 405, not a gateway 404; the
  protected-resource metadata path of each public path (RFC 9728) sends GET to the same function.
- The HTTP API throttles every route (DefaultRouteSettings, burst and rate limits), leaves CORS
  to the functions (no CorsConfiguration: preflights reach them, H9) and sends the root metadata
  path to a function (A10).
- The only permissions are s3:GetObject on the manifest object and dynamodb:UpdateItem on the
  delegation table that MCP_AUTH_TABLE names (on-demand, string key pk, TTL on ttl); logs have a
  retention.
- Outputs give each deployment's public URL.

Run from the repository root with the Python of .venv (infra/lint.sh does).
"""

import copy
import json
import os
import re
import subprocess
import sys

from cfnlint.decode import decode
from samtranslator.translator.transform import transform

TEMPLATE = "template.yaml"
# Files whose quoted "MCP_*" names are the variables the gateway reads.
VARIABLE_SOURCES = ["shared/src/config/gateway.rs", "shared/src/config/auth.rs"]
# RFC 9728 metadata of a resource at https://host/PATH lives at https://host/WELL_KNOWN/PATH.
WELL_KNOWN = "/.well-known/oauth-protected-resource"
problems = []


def problem(text):
    problems.append(text)


def workspace_lambda_binaries():
    """Binary targets of workspace packages that depend on lambda_http."""
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    binaries = {}
    for package in metadata["packages"]:
        is_lambda = any(d["name"] == "lambda_http" for d in package["dependencies"])
        for target in package["targets"]:
            if "bin" in target["kind"]:
                binaries[target["name"]] = is_lambda
    return binaries


def gateway_variables():
    """MCP_* names read by the configuration code and listed in the README."""
    in_code = set()
    for source in VARIABLE_SOURCES:
        with open(source, encoding="utf-8") as f:
            in_code |= set(re.findall(r'"(MCP_[A-Z_]+)"', f.read()))
    with open("README.md", encoding="utf-8") as f:
        in_readme = set(re.findall(r"^\| `(MCP_[A-Z_]+)`", f.read(), re.MULTILINE))
    if in_code != in_readme:
        problem(
            f"README configuration table and {' + '.join(VARIABLE_SOURCES)} differ: "
            f"code only {sorted(in_code - in_readme)}, README only {sorted(in_readme - in_code)}"
        )
    return in_code | in_readme


def merged_function(template, resource):
    """A function's properties with the template's Globals applied (one level deep)."""
    merged = copy.deepcopy(template.get("Globals", {}).get("Function", {}))
    for key, value in resource.get("Properties", {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_dicts(merged[key], value)
        else:
            merged[key] = value
    return merged


def merge_dicts(base, extra):
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_dicts(out[key], value)
        else:
            out[key] = value
    return out


def auth_table(template, resources):
    """The delegation table's logical name, after checking its shape; None when there is none."""
    tables = [name for name, r in resources.items() if r["Type"] == "AWS::DynamoDB::Table"]
    if len(tables) != 1:
        problem(f"expected one DynamoDB delegation table, found {tables}")
        return None
    name = tables[0]
    props = resources[name].get("Properties", {})
    if props.get("BillingMode") != "PAY_PER_REQUEST":
        problem(f"{name}: BillingMode must be PAY_PER_REQUEST (on-demand)")
    if props.get("KeySchema") != [{"AttributeName": "pk", "KeyType": "HASH"}]:
        problem(f"{name}: KeySchema must be the string partition key pk alone")
    if props.get("AttributeDefinitions") != [{"AttributeName": "pk", "AttributeType": "S"}]:
        problem(f"{name}: AttributeDefinitions must define pk as a string (S)")
    if props.get("TimeToLiveSpecification") != {"AttributeName": "ttl", "Enabled": True}:
        problem(f"{name}: TimeToLiveSpecification must enable TTL on ttl")
    return name


def is_table_arn(resource, table):
    """Whether a policy Resource is exactly the table's ARN (!GetAtt TABLE.Arn)."""
    get_att = resource.get("Fn::GetAtt") if isinstance(resource, dict) else None
    if isinstance(get_att, str):
        get_att = get_att.split(".", 1)
    return table is not None and get_att == [table, "Arn"]


def transformed(template):
    """The template after the SAM transform, as CloudFormation would get it."""
    document = copy.deepcopy(template)
    document.setdefault("Globals", {}).setdefault("Function", {})["CodeUri"] = "s3://bucket/code.zip"

    class NoManagedPolicies:
        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    return transform(document, {"ManifestBucket": "manifest-bucket"}, NoManagedPolicies())


def main():
    template, matches = decode(TEMPLATE)
    if matches:
        for match in matches:
            problem(str(match))
        return
    binaries = workspace_lambda_binaries()
    variables = gateway_variables()
    resources = template["Resources"]
    functions = {
        name: r for name, r in resources.items() if r["Type"] == "AWS::Serverless::Function"
    }
    if len(functions) < 2:
        problem(f"expected a function per deployment, found {sorted(functions)}")

    manifest_arn = {"Fn::Sub": "arn:${AWS::Partition}:s3:::${ManifestBucket}/${ManifestKey}"}
    table = auth_table(template, resources)
    endpoints = {}
    for name, resource in functions.items():
        props = merged_function(template, resource)
        for key, expected in [
            ("Runtime", "provided.al2023"),
            ("Handler", "bootstrap"),
            ("Architectures", ["arm64"]),
        ]:
            if props.get(key) != expected:
                problem(f"{name}: {key} is {props.get(key)!r}, expected {expected!r}")
        metadata = resource.get("Metadata", {})
        if metadata.get("BuildMethod") != "rust-cargolambda":
            problem(f"{name}: Metadata.BuildMethod must be rust-cargolambda")
        binary = metadata.get("BuildProperties", {}).get("Binary")
        if binary not in binaries:
            problem(f"{name}: Binary {binary!r} is not a binary of the workspace {sorted(binaries)}")
        elif not binaries[binary]:
            problem(f"{name}: Binary {binary!r} is not a Lambda function (no lambda_http)")

        env = props.get("Environment", {}).get("Variables", {})
        missing = sorted(variables - set(env))
        if missing:
            problem(f"{name}: environment lacks {missing}")
        if env.get("MCP_REGISTRY_SOURCE") != {"Fn::Sub": "s3://${ManifestBucket}/${ManifestKey}"}:
            problem(f"{name}: MCP_REGISTRY_SOURCE must be the manifest object")
        if table is not None and env.get("MCP_AUTH_TABLE") != {"Ref": table}:
            problem(f"{name}: MCP_AUTH_TABLE must be the delegation table {table}")
        endpoints[name] = (env.get("MCP_ENDPOINT_PATH"), env.get("MCP_ROUTING"))

        statements = [
            s for policy in props.get("Policies", []) for s in policy.get("Statement", [])
        ]
        granted = set()
        for statement in statements:
            actions = statement.get("Action")
            actions = actions if isinstance(actions, list) else [actions]
            if statement.get("Effect") != "Allow" or actions not in (
                ["s3:GetObject"],
                ["dynamodb:UpdateItem"],
            ):
                problem(
                    f"{name}: a statement must allow s3:GetObject or dynamodb:UpdateItem alone, "
                    f"found {statement}"
                )
                continue
            if actions == ["s3:GetObject"] and statement.get("Resource") != manifest_arn:
                problem(f"{name}: s3:GetObject must be scoped to the manifest object")
            elif actions == ["dynamodb:UpdateItem"] and not is_table_arn(
                statement.get("Resource"), table
            ):
                problem(f"{name}: dynamodb:UpdateItem must be scoped to the delegation table's ARN")
            granted.add(actions[0])
        if "s3:GetObject" not in granted:
            problem(f"{name}: no permission to read the manifest")
        if "dynamodb:UpdateItem" not in granted:
            problem(f"{name}: no permission to update the delegation table")

        group = props.get("LoggingConfig", {}).get("LogGroup", {}).get("Ref")
        if group not in resources or "RetentionInDays" not in resources[group]["Properties"]:
            problem(f"{name}: LoggingConfig.LogGroup must be a log group with RetentionInDays")

    cfn = transformed(template)
    apis = [r for r in cfn["Resources"].values() if r["Type"] == "AWS::ApiGatewayV2::Api"]
    if len(apis) != 1:
        problem(f"expected one HTTP API, found {len(apis)}")
        return
    stages = [r for r in cfn["Resources"].values() if r["Type"] == "AWS::ApiGatewayV2::Stage"]
    for stage in stages:
        settings = stage["Properties"].get("DefaultRouteSettings", {})
        for limit in ("ThrottlingBurstLimit", "ThrottlingRateLimit"):
            if limit not in settings:
                problem(f"HTTP API stage lacks DefaultRouteSettings.{limit} (the flood floor)")
    if not stages:
        problem("HTTP API has no stage")
    body = apis[0]["Properties"]["Body"]
    if "CorsConfiguration" in apis[0]["Properties"] or "x-amazon-apigateway-cors" in body:
        problem("the HTTP API must not answer CORS itself: preflights go to the functions (H9)")
    paths = body["paths"]
    served = {}
    for path, operations in paths.items():
        if path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/"):
            if list(operations) != ["get"]:
                problem(f"HTTP API metadata path {path} must send GET, has {list(operations)}")
        elif list(operations) != ["x-amazon-apigateway-any-method"]:
            problem(f"HTTP API path {path} must send every method (ANY), has {list(operations)}")
        uri = json.dumps(operations[next(iter(operations))]["x-amazon-apigateway-integration"]["uri"])
        owner = [name for name in functions if "${" + name + ".Arn}" in uri]
        served.setdefault(owner[0] if owner else None, set()).add(path)
    if not any(WELL_KNOWN in routes for routes in served.values()):
        problem(f"no function answers the root metadata path {WELL_KNOWN} (A10)")
    for name, (endpoint, routing) in endpoints.items():
        routes = served.get(name, set())
        public = endpoint if routing == "fixed" else endpoint + "/{routeKey}"
        wanted = {endpoint, public, WELL_KNOWN + public}
        if not wanted <= routes:
            problem(f"{name}: HTTP API routes {sorted(routes)} do not cover {sorted(wanted)}")

    outputs = json.dumps(template.get("Outputs", {}))
    for name, (endpoint, routing) in endpoints.items():
        public = endpoint if routing == "fixed" else endpoint + "/{routeKey}"
        if public + '"' not in outputs:
            problem(f"Outputs lack the public URL of {name} ({public})")


if __name__ == "__main__":
    main()
    for text in problems:
        print(f"template.yaml: {text}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(
        "template.yaml: functions, binaries, MCP_* variables, routes, throttling, delegation table, "
        "permissions and outputs check out"
    )
