//! Line charts as SVG files, which any browser shows: a title, axis
//! labels, tick values on both axes, a legend, one polyline per series. The
//! CSV with the same figures is always written beside a chart.

/// Colours of successive series: blue, orange, green, red.
const COLOURS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// What a chart shows.
pub struct Chart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// (name, points) per series, drawn over a shared x and y range.
    pub series: &'a [(&'a str, Vec<(f64, f64)>)],
}

/// About `n` round tick values covering `lo..=hi` (steps of 1, 2 or 5
/// times a power of ten).
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|&s| s >= raw).unwrap_or(10.0 * power);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    // Rounded, so 3 x 0.1 is written 0.3.
    (first..=last).map(|i| (i as f64 * step * 1e9).round() / 1e9).collect()
}

fn label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (0.01..100_000.0).contains(&a) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The plotting area in pixels and the data ranges it shows.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    /// The frame of a `w` x `h` chart showing every finite point of the
    /// series (unit ranges where there are none, or all are equal).
    fn new(chart: &Chart<'_>, w: f64, h: f64) -> Frame {
        let finite = chart.series.iter().flat_map(|(_, p)| p.iter()).filter(|p| p.0.is_finite() && p.1.is_finite());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in finite {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        Frame { left: 64.0, right: w - 16.0, top: 36.0, bottom: h - 48.0, x: (x0, x1), y: (y0, y1) }
    }

    fn sx(&self, x: f64) -> f64 {
        self.left + (x - self.x.0) / (self.x.1 - self.x.0) * (self.right - self.left)
    }

    fn sy(&self, y: f64) -> f64 {
        self.bottom - (y - self.y.0) / (self.y.1 - self.y.0) * (self.bottom - self.top)
    }
}

/// The chart as an SVG document of `width` x `height` pixels.
pub fn line_chart(chart: &Chart<'_>, width: usize, height: usize) -> String {
    let (w, h) = (width as f64, height as f64);
    let f = Frame::new(chart, w, h);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
        w / 2.0,
        escape(chart.title)
    ));
    axes(&mut svg, &f, chart, h);
    for (i, (name, points)) in chart.series.iter().enumerate() {
        series(&mut svg, &f, (i, name), points);
    }
    svg.push_str("</svg>\n");
    svg
}

/// The grid with tick values, the axes and their labels.
fn axes(svg: &mut String, f: &Frame, chart: &Chart<'_>, h: f64) {
    let (left, right, top, bottom) = (f.left, f.right, f.top, f.bottom);
    for x in ticks(f.x.0, f.x.1, 8) {
        let px = f.sx(x);
        svg.push_str(&format!(
            "<line x1=\"{px:.1}\" y1=\"{top:.1}\" x2=\"{px:.1}\" y2=\"{bottom:.1}\" stroke=\"#e4e4e4\"/>\n<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            bottom + 16.0,
            label(x)
        ));
    }
    for y in ticks(f.y.0, f.y.1, 6) {
        let py = f.sy(y);
        svg.push_str(&format!(
            "<line x1=\"{left:.1}\" y1=\"{py:.1}\" x2=\"{right:.1}\" y2=\"{py:.1}\" stroke=\"#e4e4e4\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            left - 6.0,
            py + 4.0,
            label(y)
        ));
    }
    svg.push_str(&format!(
        "<polyline points=\"{left:.1},{top:.1} {left:.1},{bottom:.1} {right:.1},{bottom:.1}\" fill=\"none\" stroke=\"black\"/>\n"
    ));
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
        (left + right) / 2.0,
        h - 10.0,
        escape(chart.x_label)
    ));
    svg.push_str(&format!(
        "<text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>\n",
        (top + bottom) / 2.0,
        (top + bottom) / 2.0,
        escape(chart.y_label)
    ));
}

/// Series `i`'s line and its legend entry (top right, in series order).
fn series(svg: &mut String, f: &Frame, (i, name): (usize, &str), points: &[(f64, f64)]) {
    let colour = COLOURS[i % COLOURS.len()];
    let path: Vec<String> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|&(x, y)| format!("{:.1},{:.1}", f.sx(x), f.sy(y)))
        .collect();
    svg.push_str(&format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"/>\n",
        path.join(" ")
    ));
    let ly = f.top + 8.0 + 16.0 * i as f64;
    svg.push_str(&format!(
        "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{colour}\" stroke-width=\"3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
        f.right - 120.0,
        f.right - 100.0,
        f.right - 94.0,
        ly + 4.0,
        escape(name)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.13, 0.52, 4), vec![0.2, 0.3, 0.4, 0.5]);
        assert_eq!(ticks(1.0, 300.0, 3), vec![100.0, 200.0, 300.0]);
        assert_eq!(ticks(5.0, 5.0, 4), vec![5.0]);
    }

    #[test]
    fn a_chart_has_its_title_labels_ticks_and_legend() {
        let series = [("policy", vec![(1.0, 2.5), (2.0, 2.0), (3.0, 1.5)]), ("value", vec![(1.0, 0.4), (3.0, 0.2)])];
        let chart = Chart { title: "Losses <run>", x_label: "step", y_label: "loss", series: &series };
        let svg = line_chart(&chart, 640, 360);
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        for text in [">Losses &lt;run&gt;</text>", ">step</text>", ">loss</text>", ">policy</text>", ">value</text>"] {
            assert!(svg.contains(text), "{text}");
        }
        // Tick values of both axes.
        assert!(svg.contains(">2.5</text>") && svg.contains(">0.5</text>") && svg.contains(">3</text>"));
        assert_eq!(svg.matches("<polyline").count(), 3, "axes and two series");
        // No data at all still gives a valid chart.
        let empty = line_chart(&Chart { title: "t", x_label: "x", y_label: "y", series: &[] }, 100, 100);
        assert!(empty.ends_with("</svg>\n"));
    }
}
