// Creates the calendar service's own MongoDB user (docker-compose.yml).
//
// The mongo image runs the scripts in /docker-entrypoint-initdb.d once, on
// the first start of an empty data volume, with mongosh logged in as the
// root user, before MongoDB starts with authentication. This one creates
// MONGO_APP_USERNAME with MONGO_APP_PASSWORD in the service's database
// (MONGO_INITDB_DATABASE, which docker-compose.yml sets to MONGO_DATABASE)
// with readWrite on that database alone: reads, writes, and the creation
// and removal of its collections and indexes, which is all the service
// does. The service connects as this user (authSource = its database);
// the root user stays with MongoDB.
//
// On a volume created before this script existed, create the user once
// by hand (see the operators' documentation).

const dbName = process.env.MONGO_INITDB_DATABASE || 'calendar';
const user = process.env.MONGO_APP_USERNAME;
const pwd = process.env.MONGO_APP_PASSWORD;
if (!user || !pwd) {
  throw new Error('set MONGO_APP_USERNAME and MONGO_APP_PASSWORD: the service connects to MongoDB as that user');
}
if (user === process.env.MONGO_INITDB_ROOT_USERNAME) {
  throw new Error('MONGO_APP_USERNAME must differ from MONGO_INITDB_ROOT_USERNAME: the service gets a user of its own');
}

db.getSiblingDB(dbName).createUser({
  user: user,
  pwd: pwd,
  roles: [{ role: 'readWrite', db: dbName }],
});
print('created MongoDB user ' + user + ' with readWrite on ' + dbName);
