package io.strata.master.file;

/**
 * A node of the namespace. Mutable, and guarded by the {@link InodeTree}'s lock: only the tree reads or
 * changes inodes, and it hands out immutable {@link FileInfo} snapshots.
 */
abstract class Inode {
  static final String DEFAULT_OWNER = "strata";
  static final String DEFAULT_GROUP = "strata";

  final long id;
  String name;
  InodeDirectory parent;
  final long creationTimeMs;
  long modificationTimeMs;
  /** Set at creation and by attribute changes only (reads do not move it). */
  long accessTimeMs;
  /** Plain names, recorded as given; nothing checks permissions against them yet. */
  String owner;
  String group;
  int mode;
  PersistenceState persistence = PersistenceState.NOT_PERSISTED;
  boolean pinned;
  /** Time to live from creation, -1 for none. */
  long ttlMs = -1;
  TtlAction ttlAction = TtlAction.DELETE;
  /** When the under file system was last compared with this inode (not journaled; 0: never). */
  long lastUfsSyncMs;
  /**
   * The tree's change sequence when this inode was last created, completed, renamed or changed its
   * persistence (not journaled): a UFS view taken before it is too old to judge the inode by.
   */
  long changedSeq;

  Inode(long id, String name, InodeDirectory parent, long nowMs, String owner, String group, int mode) {
    this.id = id;
    this.name = name;
    this.parent = parent;
    this.creationTimeMs = nowMs;
    this.modificationTimeMs = nowMs;
    this.accessTimeMs = nowMs;
    this.owner = owner;
    this.group = group;
    this.mode = mode;
  }

  abstract boolean isDirectory();

  static String ownerOrDefault(String owner) {
    return owner == null || owner.isEmpty() ? DEFAULT_OWNER : owner;
  }

  static String groupOrDefault(String group) {
    return group == null || group.isEmpty() ? DEFAULT_GROUP : group;
  }
}
