export interface WebhookRow {
  id: string;
  seq: number;
  workspace_id: string;
  channel_id: string;
  name: string;
  created_by: string | null;
  created_at: Date;
}

/** The Webhook object: its url is the posting address, the only credential needed to post. */
export const presentWebhook = (row: WebhookRow, publicBaseUrl: string) => ({
  id: row.id,
  name: row.name,
  channel_id: row.channel_id,
  url: `${publicBaseUrl}/hooks/${row.id}`,
  created_by: row.created_by,
  created_at: row.created_at,
});
