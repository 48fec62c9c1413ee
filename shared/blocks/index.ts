// Block / rich-text validation for content_json documents (docs/decisions.md, "Block URLs").
export { AGENT_BLOCK_NAMES, BLOCK_NAMES, type BlockName } from './schemas.js';
export { validateContentJson, type BlockRules, type ValidationResult } from './validate.js';
