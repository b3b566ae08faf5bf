#!/usr/bin/env bash
# Makes sample.key (a fresh AES-256 key, 64 hex digits; kept if it exists unless --new-key) and
# encrypted.json, whose encrypted_data holds the alert text sealed with it:
# base64(nonce ‖ ciphertext ‖ tag), AES-256-GCM. `openssl enc` has no GCM, so the sealing is
# seal.swift on libcrypto, run by the swift interpreter against the package's CCrypto module.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
key="$here/sample.key"

if [ "${1:-}" = "--new-key" ] || [ ! -s "$key" ]; then
  openssl rand -hex 32 >"$key"
fi

plaintext='{"title":"Your sign-in code","subtitle":"Acme Bank","body":"428 913 is your code. It expires in 5 minutes."}'
sealed="$(swift -I "$root/Sources/CCrypto" -lcrypto "$here/seal.swift" "$key" "$plaintext")"

cat >"$here/encrypted.json" <<JSON
{
  "aps": {
    "alert": { "title": "New message", "body": "You have a new message." },
    "mutable-content": 1,
    "category": "secure-message"
  },
  "encrypted_data": "$sealed",
  "message-id": "m-20240229-0001"
}
JSON
echo "wrote $key and $here/encrypted.json" >&2
