package io.strata.master.web;

import io.strata.common.exception.StrataException;
import io.strata.common.format.Sizes;
import io.strata.common.format.Times;
import io.strata.master.block.BlockState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileInfo;
import io.strata.master.file.FileSystemMaster;
import io.strata.server.web.Html;
import io.strata.server.web.Html.Page;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The web UI's file browser ({@code /browse?path=...}): a directory's children with links into each
 * (at most {@value #LIST_LIMIT} shown), or a file's status (the keys {@code strata fs stat} prints), its
 * blocks with their locations (as {@code strata fs location}) and its first {@value FileHead#BYTES} bytes
 * as escaped text.
 *
 * <p>Status, listing and locations come from the master's own state; loading a path Strata has not seen
 * yet from the under file system happens as for {@code fs ls} (outside any lock). The file's first bytes
 * are read from a worker by {@link FileHead}. A missing path gets the page with its reason and status 404, a
 * malformed one 400.
 * Thread-safe (stateless but for the head reader, whose channels {@link #close} closes with the web server).
 */
final class FileBrowser implements AutoCloseable {
  static final int LIST_LIMIT = 1000;
  private final FileHead head;

  FileBrowser(long maxMessageBytes) {
    this.head = new FileHead(maxMessageBytes);
  }

  @Override
  public void close() {
    head.close();
  }

  /** Thrown by the listing sink once it has what the page shows: stops a huge listing early. */
  private static final class Enough extends RuntimeException {
    Enough() {
      super(null, null, false, false);
    }
  }

  Page page(Page p, FileSystemMaster fs, Map<String, String> query) {
    // As the CLI takes paths: "/data/", "data" and "/a/../data" all mean /data.
    String path = io.strata.common.path.StrataPath.normalise(query.getOrDefault("path", "/"));
    if (path == null || path.isEmpty()) {
      path = "/";
    }
    FileInfo info;
    try {
      info = fs.getStatus(path, -1);
    } catch (StrataException | RuntimeException e) {
      // 404 for a path that is not there, 400 for one that cannot be a path, 500 for anything else
      int status = e instanceof io.strata.common.exception.NotFoundException ? 404
          : e instanceof io.strata.common.exception.InvalidArgumentException
          || e instanceof IllegalArgumentException
          ? 400 : 500;
      return p.status(status).h1(Html.text(path))
          .p(Html.span("bad", "Cannot show " + path + ": " + e.getMessage()));
    }
    p.h1(breadcrumbs(info.path()));
    return info.directory() ? directory(p, fs, info) : file(p, fs, info);
  }

  /** The path with each ancestor a link to its listing; its text is the path itself. */
  private static Html.Markup breadcrumbs(String path) {
    StringBuilder b = new StringBuilder(Html.link(Html.href("/browse", "path", "/"), "/").html());
    String at = "";
    for (String part : path.split("/")) {
      if (part.isEmpty()) {
        continue;
      }
      b.append(at.isEmpty() ? "" : "/");
      at = at + "/" + part;
      b.append(Html.link(Html.href("/browse", "path", at), part).html());
    }
    return new Html.Markup("<span id=\"path\">" + b + "</span>");
  }

  private static Page directory(Page p, FileSystemMaster fs, FileInfo dir) {
    List<FileInfo> children = new ArrayList<>();
    boolean more = false;
    try {
      fs.listStatus(dir.path(), false, LIST_LIMIT + 1, batch -> {
        for (FileInfo f : batch) {
          if (!f.path().equals(dir.path())) {
            children.add(f);
          }
        }
        throw new Enough();
      }, -1);
    } catch (Enough e) {
      // the first batch is all the page shows
    } catch (StrataException | RuntimeException e) {
      return p.p(Html.span("bad", "Cannot list " + dir.path() + ": " + e.getMessage()));
    }
    if (children.size() > LIST_LIMIT) {
      more = true;
      children.subList(LIST_LIMIT, children.size()).clear();
    }
    List<List<?>> rows = new ArrayList<>();
    for (FileInfo f : children) {
      rows.add(List.of(Html.link(Html.href("/browse", "path", f.path()), f.name() + (f.directory() ? "/" : "")),
          f.directory() ? "directory" : "file", f.directory() ? "" : Sizes.human(f.length()),
          Integer.toOctalString(f.mode() & 07777), f.owner(), f.group(), Times.iso(f.modificationTimeMs()),
          f.persistence().name()));
    }
    p.p(children.size() + (more ? "+" : "") + " entries" + (dir.mountPoint() ? "; a mount point of " + dir.ufsPath()
        : "") + (more ? "; only the first " + LIST_LIMIT + " are shown (strata fs ls lists them all)." : "."));
    return p.table("listing", List.of("Name", "Type", "Size", "Mode", "Owner", "Group", "Modified", "Persistence"),
        rows);
  }

  private Page file(Page p, FileSystemMaster fs, FileInfo f) {
    p.h2("Status").keyValues("stat", stat(f));
    List<BlockState> blocks = f.complete() ? fs.blocksOf(f) : List.of();
    List<List<?>> rows = new ArrayList<>();
    long offset = 0;
    for (BlockState b : blocks) {
      StringBuilder workers = new StringBuilder();
      StringBuilder tiers = new StringBuilder();
      for (BlockState.Location l : b.locations()) {
        workers.append(workers.length() == 0 ? "" : ",").append(l.worker().address());
        tiers.append(tiers.length() == 0 ? "" : ",").append(l.tier());
      }
      rows.add(List.of(b.blockId(), offset, b.length(), workers.toString(), tiers.toString()));
      offset += b.length();
    }
    p.h2("Blocks").table("blocks", List.of("Block", "Offset", "Length", "Workers", "Tiers"), rows);
    if (!f.complete()) {
      p.p(Html.span("note", "The file is still being written: its blocks and bytes show once it is complete."));
      return p;
    }
    p.h2("First bytes");
    List<WorkerState> live = fs.blockMaster().liveWorkers();
    FileHead.Result r = head.read(f, blocks, live);
    if (r.error() != null) {
      return p.p(Html.span("bad", r.error()));
    }
    p.p(Html.span("note", "The first " + r.bytes().length + " of " + f.length() + " bytes, read from worker "
        + r.from() + ", as UTF-8 text (undecodable bytes show as \uFFFD)."));
    return p.pre("head", new String(r.bytes(), java.nio.charset.StandardCharsets.UTF_8));
  }

  /** The keys and values {@code strata fs stat} prints, in its order. */
  private static Map<String, Object> stat(FileInfo f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("path", f.path());
    m.put("type", f.directory() ? "directory" : "file");
    m.put("length", f.length());
    m.put("block_size", f.blockSize());
    m.put("complete", f.complete());
    m.put("mode", Integer.toOctalString(f.mode() & 07777));
    m.put("owner", f.owner());
    m.put("group", f.group());
    m.put("modification_time", Times.iso(f.modificationTimeMs()));
    m.put("creation_time", Times.iso(f.creationTimeMs()));
    m.put("id", f.id());
    m.put("blocks", f.blockCount());
    m.put("persistence", f.persistence().name());
    m.put("pinned", f.pinned());
    m.put("ttl_ms", f.ttlMs());
    m.put("ttl_action", f.ttlAction().name());
    m.put("ufs_path", f.ufsPath());
    m.put("mount_point", f.mountPoint());
    return m;
  }
}
