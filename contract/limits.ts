/** Bounds both sides apply to sender-controlled input. Each is written here once. */

/** Longest extension id; longer ids count as invalid. */
export const MAX_EXTENSION_ID_LENGTH = 128;
/** Most extension ids recorded per request and per side; the rest are counted as dropped. */
export const MAX_IDS_PER_REQUEST = 64;
/** Longest string value of a metric or span attribute. */
export const MAX_ATTRIBUTE_LENGTH = 256;
