#!/bin/sh
# Writes the key file of the MongoDB replica set (docker-compose.yml, the
# mongo-keyfile one-shot service, run from the mongo image as root).
#
# MongoDB runs as a replica set (rs0) so that the driver retries writes,
# and a replica set with authentication needs a key file: the key its
# members (here, the one) authenticate each other with. mongod refuses a
# key file that others can read, so it is made readable by its owner
# alone (mode 400) and owned by the mongodb user the server runs as.
#
# The key is made once: a key file that exists is kept (mode and owner
# set again), since every member of the set must keep the same key.
#
# Usage: mongo-keyfile.sh PATH   (owner: $KEYFILE_OWNER, default mongodb:mongodb)
set -eu
f=${1:?usage: mongo-keyfile.sh PATH}
owner=${KEYFILE_OWNER:-mongodb:mongodb}
umask 077
if [ ! -s "$f" ]; then
  # 756 random bytes are 1008 base64 characters: MongoDB accepts 6 to
  # 1024 characters of the base64 set.
  head -c 756 /dev/urandom | base64 | tr -d '\n' > "$f.tmp"
  mv "$f.tmp" "$f"
fi
chown "$owner" "$f"
chmod 400 "$f"
echo "MongoDB key file ready: $f"
