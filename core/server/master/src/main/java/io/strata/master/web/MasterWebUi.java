package io.strata.master.web;

import com.sun.net.httpserver.HttpExchange;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigCheck;
import io.strata.common.conf.PropertyKey;
import io.strata.common.conf.StrataConf;
import io.strata.common.format.Sizes;
import io.strata.common.format.Times;
import io.strata.master.MasterKeys;
import io.strata.master.MasterProcess;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.StorageDirState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.file.MountTable;
import io.strata.server.ServerKeys;
import io.strata.server.ufs.Redact;
import io.strata.common.Version;
import io.strata.server.web.Html;
import io.strata.server.web.Html.Page;
import io.strata.server.web.TierTotals;
import io.strata.server.web.WebServer;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The master's web UI, server-rendered HTML on its web port: the overview ({@code /}: version, uptime,
 * role, capacity and usage in all and per tier, live and lost workers, namespace counts), the workers
 * ({@code /workers}), the file browser ({@code /browse}, see {@link FileBrowser}), the mount table
 * ({@code /mounts}) and the configuration ({@code /config}, credentials masked by {@link Redact}).
 *
 * <p>Read-only; every name goes through {@link Html}. Each request reads the master's own in-memory
 * state ({@link FileSystemMaster}, {@link BlockMaster}: snapshots taken under their own locks), never the
 * master's RPC port. The figures are the ones {@code strata fsadmin report} prints, computed the same way
 * as the GetClusterInfo call. A standby master says so, and its pages link nothing that needs the leader
 * (workers, files and mounts answer 503 there). Thread-safe: it keeps no state of its own beyond what it is
 * given.
 */
public final class MasterWebUi {
  private final MasterProcess master;
  private final StrataConf conf;
  private final Clock clock;
  private final long startMs;
  private final String id;
  private final FileBrowser browser;

  private MasterWebUi(MasterProcess master, StrataConf conf, Clock clock, long startMs, String id) {
    this.master = master;
    this.conf = conf;
    this.clock = clock;
    this.startMs = startMs;
    this.id = id;
    this.browser = new FileBrowser(conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE));
  }

  /** Serves the pages on {@code web}; {@code id} is the master's {@code host:port}, {@code startMs} its start. */
  public static void register(WebServer web, MasterProcess master, StrataConf conf, Clock clock, long startMs,
      String id) {
    MasterWebUi ui = new MasterWebUi(master, conf, clock, startMs, id);
    web.route("/", ui::overview);
    web.route("/workers", ex -> ui.leaderPage(ex, ui::workers));
    web.route("/browse", ex -> ui.leaderPage(ex, fs -> ui.browser.page(ui.page("Browse"), fs, Html.query(ex))));
    web.route("/mounts", ex -> ui.leaderPage(ex, ui::mounts));
    web.route("/config", ex -> Html.send(ex, 200, ui.config()));
    web.closeWith(ui.browser);
  }

  /** Builds a page of the leader's state, or answers a standby's 503. */
  @FunctionalInterface
  private interface LeaderPage {
    Page build(FileSystemMaster fs) throws IOException;
  }

  private void leaderPage(HttpExchange ex, LeaderPage builder) throws IOException {
    FileSystemMaster fs = master.fileSystemMaster();
    if (!master.isLeading() || fs == null) {
      Page p = page("Standby").h1("Not the leader").p("This master (", id, ") is ", role().equals("standby")
          ? "a standby: it follows the journal and serves nothing until it is elected leader. Workers, files "
          + "and mounts are on the leader's web port." : "starting: it serves once its journal is recovered.");
      Html.send(ex, 503, p);
      return;
    }
    Page built = builder.build(fs);
    Html.send(ex, built.status(), built);
  }

  /** A page with the nav bar: a standby links only what it can answer itself. */
  private Page page(String title) {
    Page p = new Page("Strata " + title + " - " + id).nav("/", "Overview");
    if (master.isLeading()) {
      p.nav("/workers", "Workers").nav(Html.href("/browse", "path", "/"), "Browse").nav("/mounts", "Mounts");
    }
    return p.nav("/config", "Configuration").navNote(role());
  }

  /** leader; standby (HA, not elected, or still taking over); starting (a single master replaying its journal). */
  private String role() {
    return master.isLeading() ? "leader" : conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS) ? "standby" : "starting";
  }

  private void overview(HttpExchange ex) throws IOException {
    if (!ex.getRequestURI().getPath().equals("/")) {
      Html.send(ex, 404, page("Not found").h1("Not found")
          .p("There is no page at ", ex.getRequestURI().getPath(), ".", Html.link("/", " Overview")));
      return;
    }
    long now = clock.millis();
    boolean leading = master.isLeading();
    FileSystemMaster fs = master.fileSystemMaster();
    Page p = page("Overview").h1("Strata master " + id);
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("Version", Version.VERSION);
    summary.put("Master", id);
    summary.put("Role", role());
    summary.put("Started", Times.iso(startMs));
    summary.put("Uptime", Times.duration(now - startMs));
    if (!leading || fs == null) {
      p.keyValues("summary", summary).p(Html.span("note", leading || conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS)
          ? "This master is a standby: it follows the journal and answers no file system calls. Workers report "
          + "to the leader, whose web port shows the cluster."
          : "This master is starting: it is recovering its journal and serves once that is done."));
      Html.send(ex, 200, p);
      return;
    }
    BlockMaster bm = fs.blockMaster();
    List<WorkerState> live = bm.liveWorkers();
    List<WorkerState> lost = bm.lostWorkers();
    long capacity = live.stream().mapToLong(WorkerState::capacityBytes).sum();
    long used = live.stream().mapToLong(WorkerState::usedBytes).sum();
    summary.put("Live workers", live.size());
    summary.put("Lost workers", lost.size());
    summary.put("Capacity", Sizes.bytesAndHuman(capacity));
    summary.put("Used", Sizes.bytesAndHuman(used));
    summary.put("Available", Sizes.bytesAndHuman(Math.max(0, capacity - used)));
    summary.put("Files", fs.tree().fileCount());
    summary.put("Directories", fs.tree().directoryCount());
    summary.put("Blocks", bm.blockCount());
    p.keyValues("summary", summary);
    p.h2("Tiers").table("tiers", List.of("Tier", "Capacity", "Used", "Available", "Dirs", "Bad dirs"), tierRows(live));
    if (!lost.isEmpty()) {
      p.h2("Lost workers").table("lost", List.of("Id", "Address", "Last heartbeat"), lostRows(lost));
    }
    Html.send(ex, 200, p);
  }

  /** Per tier over the live workers: capacity and usage of good dirs, dir counts (as fsadmin report's tier lines). */
  private static List<List<?>> tierRows(List<WorkerState> live) {
    TierTotals totals = new TierTotals();
    for (WorkerState w : live) {
      for (StorageDirState d : w.dirs()) {
        totals.add(d.tierOrdinal(), d.tier(), d.good(), d.capacityBytes(), d.usedBytes());
      }
    }
    List<List<?>> rows = new ArrayList<>();
    for (TierTotals.Tier t : totals.tiers()) {
      rows.add(List.of(t.alias(), Sizes.bytesAndHuman(t.capacityBytes()), Sizes.bytesAndHuman(t.usedBytes()),
          Sizes.bytesAndHuman(t.availableBytes()), t.dirs(), t.badDirs() > 0 ? Html.span("bad", t.badDirs()) : 0));
    }
    return rows;
  }

  private List<List<?>> lostRows(List<WorkerState> lost) {
    List<List<?>> rows = new ArrayList<>();
    for (WorkerState w : sorted(lost)) {
      rows.add(List.of(w.id(), w.address().toString(), Times.iso(w.lastHeartbeatMs())));
    }
    return rows;
  }

  private static List<WorkerState> sorted(List<WorkerState> workers) {
    List<WorkerState> out = new ArrayList<>(workers);
    out.sort(Comparator.comparingLong(WorkerState::id));
    return out;
  }

  private Page workers(FileSystemMaster fs) {
    long now = clock.millis();
    BlockMaster bm = fs.blockMaster();
    List<WorkerState> live = sorted(bm.liveWorkers());
    List<List<?>> rows = new ArrayList<>();
    List<List<?>> dirs = new ArrayList<>();
    for (WorkerState w : live) {
      rows.add(List.of(w.id(), addressCell(w.address()), Sizes.bytesAndHuman(w.capacityBytes()),
          Sizes.bytesAndHuman(w.usedBytes()), w.blockCount(), Math.max(0, now - w.lastHeartbeatMs()) + " ms ago",
          Times.iso(w.startTimeMs())));
      for (StorageDirState d : w.dirs()) {
        dirs.add(List.of(w.address().toString(), d.tier(), d.path(), d.good() ? Html.span("ok", "OK")
            : Html.span("bad", "BAD"), Sizes.bytesAndHuman(d.capacityBytes()), Sizes.bytesAndHuman(d.usedBytes()),
            d.lostBlocks()));
      }
    }
    Page p = page("Workers").h1("Workers").p(live.size() + " live, " + bm.lostWorkers().size() + " lost. Each "
        + "worker serves its own page (tiers, dirs, blocks) on its web port, by default its RPC port + 1; a "
        + "worker's address links to it (when the worker registered its web port).");
    p.h2("Live workers").table("workers", List.of("Id", "Address", "Capacity", "Used", "Blocks", "Last heartbeat",
        "Started"), rows);
    p.h2("Storage dirs").table("dirs", List.of("Worker", "Tier", "Path", "State", "Capacity", "Used",
        "Lost blocks"), dirs);
    List<WorkerState> lost = bm.lostWorkers();
    if (!lost.isEmpty()) {
      p.h2("Lost workers").table("lost", List.of("Id", "Address", "Last heartbeat"), lostRows(lost));
    }
    return p;
  }

  /** A worker's address, as a link to its own page when it registered its web port. */
  private static Object addressCell(io.strata.common.net.WorkerAddress a) {
    return a.webPort() > 0 ? Html.link("http://" + a.host() + ":" + a.webPort() + "/", a.toString())
        : a.toString();
  }

  private Page mounts(FileSystemMaster fs) {
    List<List<?>> rows = new ArrayList<>();
    for (MountTable.MountInfo m : fs.mountTable()) {
      StringBuilder options = new StringBuilder();
      for (Map.Entry<String, String> o : new TreeMap<>(m.options()).entrySet()) {
        options.append(options.length() == 0 ? "" : ", ").append(o.getKey()).append('=')
            .append(Redact.masked(o.getKey(), o.getValue()));
      }
      rows.add(List.of(Html.link(Html.href("/browse", "path", m.path()), m.path()), m.ufsUri(), m.readOnly(),
          m.shared(), options.toString()));
    }
    return page("Mounts").h1("Mounts").table("mounts", List.of("Path", "Under file system", "Read-only", "Shared",
        "Options"), rows);
  }

  /** The master's settings: every key it knows (set or default), then other names set for it. */
  private Page config() {
    List<List<?>> rows = new ArrayList<>();
    Set<String> known = new HashSet<>();
    List<PropertyKey<?>> keys = ConfigCheck.keysOf(CommonKeys.class, ServerKeys.class, MasterKeys.class);
    keys.sort(Comparator.comparing(PropertyKey::name));
    for (PropertyKey<?> k : keys) {
      known.add(k.name());
      String raw = conf.getRaw(k.name());
      String value = raw != null ? raw : k.defaultValue();
      rows.add(List.of(k.name(), value == null ? "" : Redact.setting(k.name(), value), raw != null ? "set"
          : "default", k.doc()));
    }
    for (Map.Entry<String, String> e : new TreeMap<>(conf.explicitValues()).entrySet()) {
      if (!known.contains(e.getKey())) {
        rows.add(List.of(e.getKey(), Redact.setting(e.getKey(), e.getValue()), "set (not a master key)", ""));
      }
    }
    return page("Configuration").h1("Configuration of master " + id)
        .p(Html.span("note", "Values of names that look like credentials are masked as " + Redact.MASK + "."))
        .table("config", List.of("Key", "Value", "Source", "Description"), rows);
  }
}
