// The API's objects, named: aliases of the schemas in api-schema.d.ts, which
// is generated from the API's OpenAPI document (npm run web:api-types).
import type { components } from './api-schema.js';

type Schemas = components['schemas'];
export type User = Schemas['User'];
export type Role = User['role'];
export type Workspace = Schemas['Workspace'];
export type Channel = Schemas['Channel'];
export type Conversation = Schemas['Conversation'];
export type Reaction = Schemas['ReactionSummary'];
export type DocNode = Schemas['ContentNode'];
export type Message = Schemas['Message'];
export type ApiKey = Schemas['ApiKey'];
export type IssuedApiKey = Schemas['IssuedApiKey'];
export type Webhook = Schemas['Webhook'];
export type FileInfo = Schemas['File'];
export type FileWithDownload = Schemas['FileWithDownload'];
export type ChannelMember = Schemas['ChannelMember'];
export type CreatedUser = Schemas['CreatedUser'];
export type FollowedThread = Schemas['FollowedThread'];

export interface Page<T> {
  data: T[];
  pagination: Schemas['Pagination'];
}

/** The metadata a file message carries, so any client can offer the download. */
export const FILE_METADATA_TYPE = 'axid.file';
