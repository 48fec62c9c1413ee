import type { Knex } from 'knex';

// A user's name and a user group's handle share one namespace per workspace
// (contract §14: `@name` mentions either). Groups check users when they are
// made or renamed (services/core/user-groups); this trigger is the other way,
// for every path that names a user (creation, invites, sign-in by OIDC,
// renames): a name a group has is refused as the users' own unique index
// refuses one, so each path's existing `name_taken` answer covers it. Both
// take the workspace's handle lock, so a group and a user made at once cannot
// both take one name. No group exists below level 3: there it never refuses.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION axid_user_name_not_group_handle() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.deactivated_at IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('axid:handles:' || NEW.workspace_id::text));
        IF EXISTS (SELECT 1 FROM user_groups g WHERE g.workspace_id = NEW.workspace_id AND g.handle = NEW.name) THEN
          RAISE EXCEPTION 'a user group has the handle %', NEW.name
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'users_workspace_name';
        END IF;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER users_name_not_group_handle
      BEFORE INSERT OR UPDATE OF name, deactivated_at ON users
      FOR EACH ROW
      WHEN (NEW.deactivated_at IS NULL)
      EXECUTE FUNCTION axid_user_name_not_group_handle();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS users_name_not_group_handle ON users; DROP FUNCTION IF EXISTS axid_user_name_not_group_handle()');
}
