// Makes the mongo service a single-node replica set and tells whether it
// is ready (docker-compose.yml runs it as the service's health check,
// with mongosh logged in as the root user).
//
// The mongo image runs /docker-entrypoint-initdb.d scripts (mongo-init.js)
// on a temporary server started without --replSet, so the replica set
// cannot be initiated there: this script does it on the first health
// check of the real server (rs0, one member, the host name the service
// connects to) and does nothing more on later checks. It exits 0 once
// this member is the writable primary, 1 before, and 1 when the status
// cannot be read for another reason (it then initiates nothing).

const host = process.env.MONGO_RS_HOST || 'mongo:27017';
const notYetInitialized = 94;

let status;
try {
  status = db.adminCommand({ replSetGetStatus: 1 });
} catch (e) {
  status = { ok: 0, code: e.code, errmsg: e.message };
}
if (status.ok !== 1) {
  if (status.code !== notYetInitialized) {
    print('replica set status unreadable: ' + status.errmsg);
    quit(1);
  }
  const res = rs.initiate({ _id: 'rs0', members: [{ _id: 0, host: host }] });
  print('initiated replica set rs0 with ' + host + ': ' + JSON.stringify(res));
}
quit(db.hello().isWritablePrimary ? 0 : 1);
