use super::*;
use crate::shards::{ShardInfo, merge};
use dbmeter_env::ServerRecord;
use dbmeter_env::sampler::NetSample;
use dbmeter_stats::LatencyHistogram;

fn doc(index: u64, count: u64, start: f64) -> RunDocument {
    let mut h = LatencyHistogram::new();
    h.record(1_000_000);
    let mut d = RunDocument {
        schema: crate::SCHEMA_NAME.into(),
        workload: "noop".into(),
        threads: 1,
        shard: Some(ShardInfo {
            index,
            count,
            measure_start_unix_s: start,
            ..ShardInfo::default()
        }),
        latency_histogram: h.to_base64(),
        ..RunDocument::default()
    };
    d.end.reason = "time_limit".into();
    d.totals.events = 1;
    d.totals.duration_s = 10.0;
    d
}

fn fixed(duration_s: f64, events: u64) -> Option<WarmupInfo> {
    Some(WarmupInfo {
        duration_s,
        events,
        events_per_s: events as f64 / duration_s,
        ..WarmupInfo::default()
    })
}

fn auto(duration_s: f64, steady: Option<f64>, series: &[f64]) -> Option<WarmupInfo> {
    Some(WarmupInfo {
        duration_s,
        events: 10,
        events_per_s: 1.0,
        auto: Some(AutoWarmupInfo {
            rule: AutoWarmupInfo::RULE.into(),
            max_s: 60.0,
            steady_since_s: steady,
            interval_s: 1.0,
            events_per_s: series.to_vec(),
        }),
        ..WarmupInfo::default()
    })
}

#[test]
fn warmups_are_summed_and_their_agreement_said() {
    let (mut a, mut b) = (doc(0, 2, 110.0), doc(1, 2, 110.2));
    a.warmup = fixed(10.0, 100);
    b.warmup = fixed(10.1, 50);
    let (w, m) = merge_warmups(&[&a, &b], &[110.0, 110.2]).unwrap();
    assert_eq!(w.events, 150);
    // From 100.0 (a's warm-up start) to 110.2 (b's measurement start).
    assert!((w.duration_s - 10.2).abs() < 1e-9, "{}", w.duration_s);
    assert!(m.agree && m.disagreement.is_none(), "{m:?}");
    assert_eq!(m.shards.len(), 2);
    assert_eq!(m.shards[1].mode, "fixed");
    assert_eq!(m.shards[1].events, 50);

    b.warmup = fixed(12.0, 50);
    let (_, m) = merge_warmups(&[&a, &b], &[110.0, 110.2]).unwrap();
    assert!(!m.agree);
    assert!(
        m.disagreement
            .as_deref()
            .unwrap()
            .contains("lengths differ"),
        "{m:?}"
    );

    b.warmup = None;
    let (w, m) = merge_warmups(&[&a, &b], &[110.0, 110.2]).unwrap();
    assert_eq!(w.events, 100);
    assert_eq!(m.shards[1].mode, "none");
    assert!(
        m.disagreement.as_deref().unwrap().contains("shard 1: none"),
        "{m:?}"
    );

    a.warmup = None;
    assert!(merge_warmups(&[&a, &b], &[110.0, 110.2]).is_none());
}

#[test]
fn automatic_warmups_keep_each_shards_decision() {
    let (mut a, mut b) = (doc(0, 2, 100.0), doc(1, 2, 100.0));
    a.warmup = auto(8.0, Some(5.0), &[10.0, 20.0, 30.0]);
    b.warmup = auto(8.5, Some(6.0), &[11.0, 21.0]);
    let (w, m) = merge_warmups(&[&a, &b], &[100.0, 100.0]).unwrap();
    assert!(m.agree, "{m:?}");
    let au = w.auto.unwrap();
    assert_eq!(au.events_per_s, [21.0, 41.0, 30.0]);
    // Steady once both were.
    assert_eq!(au.steady_since_s, Some(6.0));
    assert_eq!(m.shards[0].steady_since_s, Some(5.0));
    assert_eq!(m.shards[0].max_s, Some(60.0));

    b.warmup = auto(60.0, None, &[11.0]);
    let (w, m) = merge_warmups(&[&a, &b], &[100.0, 100.0]).unwrap();
    assert!(!m.agree);
    let why = m.disagreement.unwrap();
    assert!(why.contains("some became steady and some did not"), "{why}");
    assert!(why.contains("shard 1: not steady after 60.0 s"), "{why}");
    assert_eq!(w.auto.unwrap().steady_since_s, None);

    // A fixed warm-up against an automatic one: no merged auto section.
    b.warmup = fixed(8.0, 10);
    let (w, m) = merge_warmups(&[&a, &b], &[100.0, 100.0]).unwrap();
    assert!(w.auto.is_none());
    assert!(!m.agree);
}

fn os(cpu_client: f64, rx: f64, disk_r: f64) -> Option<OsRecord> {
    let s = OsSample {
        t_s: 1.0,
        duration_s: 1.0,
        cpu: CpuPct {
            user: 20.0,
            idle: 80.0,
            ..CpuPct::default()
        },
        context_switches_per_s: 1000.0,
        mem_used_bytes: 1 << 30,
        net: vec![NetSample {
            name: "eth0".into(),
            rx_bytes_per_s: rx,
            tx_bytes_per_s: rx / 2.0,
        }],
        disks: vec![dbmeter_env::sampler::DiskSample {
            name: "sda".into(),
            rkb_per_s: disk_r,
            ..Default::default()
        }],
        client_cpu_pct: Some(cpu_client),
        ..OsSample::default()
    };
    Some(OsRecord {
        interval_s: 1.0,
        server_pid: None,
        samples: vec![s.clone(), s],
    })
}

#[test]
fn os_figures_per_shard_and_summed_over_machines() {
    let (mut a, mut b, mut c) = (doc(0, 3, 1.0), doc(1, 3, 1.0), doc(2, 3, 1.0));
    a.environment.hostname = "client-a".into();
    b.environment.hostname = "client-a".into();
    c.environment.hostname = "client-b".into();
    a.os = os(50.0, 1000.0, 10.0);
    b.os = os(70.0, 1000.0, 10.0);
    c.os = os(30.0, 400.0, 4.0);
    let m = merge_os(&[&a, &b, &c]).unwrap();
    assert_eq!(m.machines, 2);
    // Every dbmeter process's CPU adds up.
    assert_eq!(m.client_cpu_pct, Some(150.0));
    // client-a's network once, client-b's once.
    assert_eq!(m.net_rx_bytes_per_s, 1400.0);
    assert_eq!(m.net_tx_bytes_per_s, 700.0);
    assert_eq!(m.disk_read_kb_per_s, 14.0);
    assert_eq!(m.shards.len(), 3);
    assert_eq!(m.shards[1].host, "client-a");
    assert_eq!(m.shards[1].client_cpu_pct, Some(70.0));
    assert_eq!(m.shards[2].cpu.user, 20.0);
    assert_eq!(m.shards[2].samples, 2);
    assert_eq!(m.shards[2].mem_used_bytes_max, 1 << 30);
    c.os = None;
    assert_eq!(merge_os(&[&a, &b, &c]).unwrap().shards.len(), 2);
    a.os = None;
    b.os = None;
    assert!(merge_os(&[&a, &b, &c]).is_none());
}

fn counters(before: &[(&str, &str)], after: &[(&str, &str)]) -> Option<CounterRecord> {
    let map = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<BTreeMap<_, _>>()
    };
    Some(CounterRecord::new(map(before), map(after), 0.0))
}

fn on_server(d: &mut RunDocument, uuid: &str) {
    d.target.url = "mysql://u:***@db:3306/sbtest".into();
    let mut s = ServerRecord {
        version: "MariaDB 11.4".into(),
        ..ServerRecord::default()
    };
    s.variables.insert("server_uuid".into(), uuid.into());
    d.server = Some(s);
}

#[test]
fn one_servers_counters_span_the_union_window_once() {
    let (mut a, mut b, mut c) = (doc(0, 3, 100.0), doc(1, 3, 100.0), doc(2, 3, 100.0));
    for d in [&mut a, &mut b, &mut c] {
        on_server(d, "u1");
    }
    // b read first (uptime 1000) and c last (uptime 1013).
    a.counters = counters(
        &[("Uptime", "1001"), ("Questions", "110")],
        &[("Uptime", "1012"), ("Questions", "1900")],
    );
    b.counters = counters(
        &[("Uptime", "1000"), ("Questions", "100")],
        &[("Uptime", "1011"), ("Questions", "1800")],
    );
    c.counters = counters(
        &[("Uptime", "1002"), ("Questions", "120")],
        &[("Uptime", "1013"), ("Questions", "2100")],
    );
    a.counters.as_mut().unwrap().other_sessions = 2;
    b.counters.as_mut().unwrap().other_sessions = 1;
    c.counters.as_mut().unwrap().other_sessions = 3;
    let starts = [100.0, 100.0, 100.0];
    let (rec, how) = merge_counters(&[&a, &b, &c], &starts);
    let rec = rec.unwrap();
    let how = how.unwrap();
    assert_eq!(how.rule, "union");
    assert_eq!(how.before_from_shard, Some(1));
    assert_eq!(how.after_from_shard, Some(2));
    // 2100 - 100: the server's work once, not summed three times.
    assert_eq!(rec.delta.get("Questions"), Some(&Number::Int(2000)));
    assert!(!rec.restarted);
    assert_eq!(rec.other_sessions, 1);

    // A restart in one shard's window leaves the deltas out.
    b.counters.as_mut().unwrap().restarted = true;
    let (rec, _) = merge_counters(&[&a, &b, &c], &starts);
    let rec = rec.unwrap();
    assert!(rec.restarted && rec.delta.is_empty());
    b.counters.as_mut().unwrap().restarted = false;

    // A restart between two shards' windows: b ran 100 s later, on a
    // server up for 5 s.
    let mut late = b.clone();
    late.counters = counters(
        &[("Uptime", "5"), ("Questions", "3")],
        &[("Uptime", "16"), ("Questions", "900")],
    );
    let (rec, _) = merge_counters(&[&a, &late], &[100.0, 200.0]);
    let rec = rec.unwrap();
    assert!(rec.restarted && rec.delta.is_empty(), "{rec:?}");

    // A shard without counters is named.
    c.counters = None;
    let (rec, how) = merge_counters(&[&a, &b, &c], &starts);
    assert_eq!(
        rec.unwrap().delta.get("Questions"),
        Some(&Number::Int(1800))
    );
    assert_eq!(how.unwrap().without, [2]);
}

#[test]
fn without_uptime_the_shards_clocks_order_the_readings() {
    let (mut a, mut b) = (doc(0, 2, 100.0), doc(1, 2, 103.0));
    on_server(&mut a, "u1");
    on_server(&mut b, "u1");
    a.counters = counters(&[("n", "10")], &[("n", "50")]);
    b.counters = counters(&[("n", "20")], &[("n", "70")]);
    let (rec, how) = merge_counters(&[&a, &b], &[100.0, 103.0]);
    assert_eq!(rec.unwrap().delta.get("n"), Some(&Number::Int(60)));
    let how = how.unwrap();
    assert_eq!(
        (how.before_from_shard, how.after_from_shard),
        (Some(0), Some(1))
    );
}

#[test]
fn different_servers_keep_their_counters_per_shard() {
    let (mut a, mut b) = (doc(0, 2, 100.0), doc(1, 2, 100.0));
    on_server(&mut a, "u1");
    on_server(&mut b, "u2");
    a.counters = counters(&[("n", "10")], &[("n", "50")]);
    b.counters = counters(&[("n", "20")], &[("n", "70")]);
    let (rec, how) = merge_counters(&[&a, &b], &[100.0, 100.0]);
    assert!(rec.is_none());
    let how = how.unwrap();
    assert_eq!(how.rule, "per_shard");
    assert_eq!(how.shards.len(), 2);
    assert_eq!(how.shards[1].delta.get("n"), Some(&Number::Int(50)));
    assert!(how.shards[1].server.contains("server_uuid=u2"));
}

fn outage(start_s: f64, length_s: Option<f64>, events_lost: u64) -> Outage {
    Outage {
        start_s,
        length_s,
        events_lost,
        tolerance_pct: 10.0,
        ..Outage::default()
    }
}

#[test]
fn outages_seen_by_several_shards_are_one() {
    let (mut a, mut b) = (doc(0, 2, 100.0), doc(1, 2, 100.5));
    // One outage from 103 to 106 (a) and 103.5 to 106.5 (b); a second
    // one only a saw, from 108 to 108.5.
    a.outages = vec![outage(3.0, Some(3.0), 7), outage(8.0, Some(0.5), 1)];
    b.outages = vec![outage(3.0, Some(3.0), 5)];
    let o = merge_outages(&[&a, &b], &[100.0, 100.5], 100.0);
    assert_eq!(o.len(), 2, "{o:?}");
    assert_eq!(o[0].start_s, 3.0);
    assert_eq!(o[0].length_s, Some(3.5));
    assert_eq!(o[0].events_lost, 12);
    assert_eq!(o[1].start_s, 8.0);
    assert_eq!(o[1].events_lost, 1);

    // Their failed attempts are summed, their errors merged, and the
    // connect time is the one of the shard that saw the server back last.
    let tried = |o: Outage, n: u64, errors: &[(&str, u64)], connect: f64| Outage {
        failed_attempts: n,
        errors: errors
            .iter()
            .map(|(e, k)| crate::outages::AttemptError {
                error: e.to_string(),
                attempts: *k,
            })
            .collect(),
        connect_s: Some(connect),
        ..o
    };
    a.outages = vec![tried(outage(3.0, Some(3.0), 7), 5, &[("refused", 5)], 0.25)];
    b.outages = vec![tried(
        outage(3.0, Some(3.0), 5),
        4,
        &[("refused", 3), ("starting up", 1)],
        0.5,
    )];
    let o = merge_outages(&[&a, &b], &[100.0, 100.5], 100.0);
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!(o[0].failed_attempts, 9);
    let errors: Vec<(&str, u64)> = o[0]
        .errors
        .iter()
        .map(|e| (e.error.as_str(), e.attempts))
        .collect();
    assert_eq!(errors, [("refused", 8), ("starting up", 1)]);
    assert_eq!(o[0].connect_s, Some(0.5));

    // Still going on when b ended (at 110.5), after a saw it end (at
    // 109): not over.
    a.outages = vec![outage(7.0, Some(2.0), 3)];
    b.outages = vec![outage(7.0, None, 4)];
    let o = merge_outages(&[&a, &b], &[100.0, 100.5], 100.0);
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!(o[0].length_s, None);
    assert_eq!(o[0].events_lost, 7);
    // b ended down at 110.5, a saw the server back at 111: over.
    a.outages = vec![outage(7.0, Some(4.0), 3)];
    let o = merge_outages(&[&a, &b], &[100.0, 100.5], 100.0);
    assert_eq!(o[0].length_s, Some(4.0));
}

#[test]
fn hosts_are_summed_by_name() {
    let (mut a, mut b) = (doc(0, 2, 1.0), doc(1, 2, 1.0));
    let h = |host: &str, users, events| HostCount {
        host: host.into(),
        users,
        events,
        errors: 1,
        connections: users + 1,
    };
    a.hosts = vec![h("h1:3306", 2, 100), h("h2:3306", 0, 0)];
    b.hosts = vec![h("h1:3306", 1, 40), h("h2:3306", 1, 30)];
    let m = merge_hosts(&[&a, &b]);
    assert_eq!(m.len(), 2);
    assert_eq!(
        (m[0].users, m[0].events, m[0].errors, m[0].connections),
        (3, 140, 2, 5)
    );
    assert_eq!((m[1].users, m[1].events, m[1].connections), (1, 30, 3));
}

#[test]
fn merge_carries_them_over() {
    let (mut a, mut b) = (doc(0, 2, 100.0), doc(1, 2, 100.0));
    for d in [&mut a, &mut b] {
        on_server(d, "u1");
        d.warmup = fixed(5.0, 10);
        d.os = os(10.0, 1.0, 1.0);
        d.outages = vec![outage(3.0, Some(1.0), 2)];
        d.hosts = vec![HostCount {
            host: "h1".into(),
            users: 1,
            events: 1,
            ..HostCount::default()
        }];
    }
    a.counters = counters(
        &[("Uptime", "10"), ("n", "1")],
        &[("Uptime", "30"), ("n", "9")],
    );
    b.counters = counters(
        &[("Uptime", "11"), ("n", "2")],
        &[("Uptime", "31"), ("n", "12")],
    );
    let m = merge(vec![("a".into(), a), ("b".into(), b)]).unwrap();
    assert_eq!(m.warmup.as_ref().unwrap().events, 20);
    assert_eq!(
        m.counters.as_ref().unwrap().delta.get("n"),
        Some(&Number::Int(11))
    );
    assert_eq!(m.outages.len(), 1);
    assert_eq!(m.outages[0].events_lost, 4);
    assert_eq!(m.outages[0].tolerance_pct, 10.0);
    assert_eq!(m.hosts[0].users, 2);
    let info = m.merged.unwrap();
    assert!(info.warmup.unwrap().agree);
    assert_eq!(info.os.unwrap().shards.len(), 2);
    assert_eq!(info.counters.unwrap().rule, "union");
    assert!(
        info.left_out
            .iter()
            .all(|l| !l.contains("warm-up") && !l.contains("counters")),
        "{:?}",
        info.left_out
    );
    assert!(info.notes.is_empty(), "{:?}", info.notes);
}
